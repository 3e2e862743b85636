"""Zarr v2: interop both ways with zarr-python 2.18 (in its own virtualenv,
made by tests/run.sh) and zarr-python 3.1, for every numcodecs compressor and
filter, data type, order and separator; consolidated metadata; errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr

import zarrox
from zarrox.errors import MetadataError, UnsupportedError
from zarrox.metadata.v2 import ArrayMetadataV2

warnings.filterwarnings("ignore", category=UserWarning)
warnings.filterwarnings("ignore", category=RuntimeWarning)

ROOT = Path(__file__).resolve().parent.parent
ZARR2_PYTHON = Path(os.environ.get("ZARROX_ZARR2_PYTHON", ROOT / ".venv-zarr2" / "bin" / "python"))
WORKER = Path(__file__).with_name("zarr2_worker.py")

BLOSC = [
    {"id": "blosc", "cname": cname, "clevel": 5, "shuffle": shuffle, "blocksize": 0}
    for cname in ("lz4", "lz4hc", "blosclz", "zstd", "zlib")
    for shuffle in (0, 1, 2, -1)
]
COMPRESSORS: list[dict[str, Any] | None] = [
    None,
    {"id": "zlib", "level": 1},
    {"id": "gzip", "level": 5},
    {"id": "bz2", "level": 9},
    {"id": "lzma", "format": 1, "check": -1, "preset": None, "filters": None},
    {"id": "zstd", "level": 3, "checksum": False},
    {"id": "zstd", "level": 1, "checksum": True},
    {"id": "lz4", "acceleration": 1},
    *BLOSC,
]

#: (id, dtype, filters, compressor, extra kwargs)
CASES: list[
    tuple[str, Any, list[dict[str, Any]] | None, dict[str, Any] | None, dict[str, Any]]
] = []
for i, comp in enumerate(COMPRESSORS):
    name = "none" if comp is None else comp["id"] + str(i)
    CASES.append((f"i4-{name}", "<i4", None, comp, {}))
for dt in [
    "|b1",
    "|i1",
    "<i2",
    "<i8",
    "|u1",
    "<u2",
    "<u4",
    "<u8",
    "<f2",
    "<f4",
    "<f8",
    "<c8",
    "<c16",
    ">i2",
    ">u4",
    ">f8",
    ">c16",
    "|S5",
    "<U3",
    ">U2",
    "<M8[s]",
    "<m8[ms]",
]:
    CASES.append((f"dtype{dt}", dt, None, {"id": "zlib", "level": 1}, {}))
CASES += [
    ("structured", [["a", "<i4"], ["b", ">f8"], ["c", "|S2"]], None, None, {}),
    ("F-order", "<f8", None, {"id": "zstd", "level": 1}, {"order": "F"}),
    (
        "F-order-bigendian",
        ">i4",
        None,
        {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
        {"order": "F"},
    ),
    ("slash-separator", "<u2", None, {"id": "zlib", "level": 1}, {"dimension_separator": "/"}),
    ("nan-fill", "<f4", None, {"id": "zlib", "level": 1}, {"fill_value": "NaN"}),
    ("neg-inf-fill", "<f8", None, None, {"fill_value": "-Infinity"}),
    ("int-fill", "<i2", None, None, {"fill_value": -7}),
    (
        "delta",
        "<i8",
        [{"id": "delta", "dtype": "<i8", "astype": "<i8"}],
        {"id": "zlib", "level": 1},
        {},
    ),
    ("delta-astype", "<i4", [{"id": "delta", "dtype": "<i4", "astype": "<i2"}], None, {}),
    ("shuffle", "<f8", [{"id": "shuffle", "elementsize": 8}], {"id": "zlib", "level": 1}, {}),
    ("astype", "<f8", [{"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}], None, {}),
    (
        "fixedscaleoffset",
        "<f8",
        [{"id": "fixedscaleoffset", "offset": 100, "scale": 10, "dtype": "<f8", "astype": "<i4"}],
        None,
        {},
    ),
    (
        "quantize",
        "<f8",
        [{"id": "quantize", "digits": 2, "dtype": "<f8", "astype": "<f8"}],
        {"id": "zlib", "level": 1},
        {},
    ),
    ("packbits", "|b1", [{"id": "packbits"}], None, {}),
    ("bitround", "<f4", [{"id": "bitround", "keepbits": 6}], {"id": "zstd", "level": 1}, {}),
    (
        "filters-chain",
        ">i4",
        [{"id": "delta", "dtype": ">i4", "astype": ">i4"}, {"id": "shuffle", "elementsize": 4}],
        {"id": "bz2", "level": 1},
        {"order": "F"},
    ),
    ("strings", "object", None, {"id": "zstd", "level": 1}, {"object_codec": {"id": "vlen-utf8"}}),
    ("bytes", "object-bytes", None, None, {"object_codec": {"id": "vlen-bytes"}}),
    (
        "strings-F",
        "object",
        None,
        {"id": "zstd", "level": 1},
        {"object_codec": {"id": "vlen-utf8"}, "order": "F"},
    ),
    ("bytes-F", "object-bytes", None, None, {"object_codec": {"id": "vlen-bytes"}, "order": "F"}),
]
SHAPE = (9, 7)
CHUNKS = (4, 3)
REGION = (6, 7)  # rows 6..9 stay unwritten: missing chunks read as fill


def make_data(dtype: Any, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype in ("object", "object-bytes"):
        text = [[f"s{r}{c}é" * (r % 3) for c in range(SHAPE[1])] for r in range(SHAPE[0])]
        if dtype == "object-bytes":
            return np.array([[t.encode() for t in row] for row in text], dtype=object)
        return np.array(text, dtype=object)
    dt = np.dtype([tuple(f) for f in dtype] if isinstance(dtype, list) else dtype)
    if dt.fields:
        out = np.zeros(SHAPE, dtype=dt)
        out["a"] = rng.integers(-50, 50, SHAPE)
        out["b"] = rng.standard_normal(SHAPE)
        out["c"] = b"xy"
        return out
    if dt.kind == "b":
        return rng.integers(0, 2, SHAPE).astype(bool)
    if dt.kind in "iu":
        hi = min(np.iinfo(dt).max, 10_000)
        return rng.integers(0, hi, SHAPE).astype(dt)
    if dt.kind in "fc":
        return (rng.standard_normal(SHAPE) * 100).astype(dt)
    if dt.kind == "S":
        return rng.choice([b"ab", b"xyz", b"", b"hello"], SHAPE).astype(dt)
    if dt.kind == "U":
        return rng.choice(["ab", "é", "", "x"], SHAPE).astype(dt)
    if dt.kind in "Mm":
        return rng.integers(0, 10**9, SHAPE).astype("<i8").view(dt)
    raise AssertionError(dt)


def worker(*args: str) -> None:
    subprocess.run([str(ZARR2_PYTHON), str(WORKER), *args], check=True)


@pytest.fixture(scope="module")
def zarr2_available() -> None:
    if not ZARR2_PYTHON.exists():
        if os.environ.get("CI"):
            pytest.fail(f"zarr-python 2.18 virtualenv missing: {ZARR2_PYTHON}")
        pytest.skip("zarr-python 2.18 virtualenv missing (tests/run.sh creates it)")


def v2_kwargs(dtype: Any, filters: Any, comp: Any, extra: dict[str, Any]) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "shape": list(SHAPE),
        "chunks": list(CHUNKS),
        "dtype": "object" if dtype == "object-bytes" else dtype,
        "compressor": comp,
        "filters": filters,
    }
    kw.update(extra)
    return kw


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, zarr2_available: None) -> dict[str, Path]:
    """Every case written by zarr 2.18 ("a") and by zarrox ("b", with the fill value
    zarr 2.18 recorded, since the writers' defaults differ), then read back by zarr
    2.18 ("ref-a", "ref-b")."""
    root = tmp_path_factory.mktemp("v2")
    data_dir = root / "data"
    data_dir.mkdir()
    region = tuple(slice(0, r) for r in REGION)
    write_jobs, read_jobs = [], []
    for n, (cid, dtype, filters, comp, extra) in enumerate(CASES):
        np.save(data_dir / f"{cid}.npy", make_data(dtype, n), allow_pickle=True)
        write_jobs.append(
            {
                "store": str(root / "a"),
                "path": cid,
                "region": REGION,
                "kwargs": v2_kwargs(dtype, filters, comp, extra),
                "data": str(data_dir / f"{cid}.npy"),
            }
        )
        for side in ("a", "b"):
            read_jobs.append(
                {"store": str(root / side), "path": cid, "out": str(root / f"ref-{side}-{cid}.npy")}
            )
    (root / "write.json").write_text(json.dumps(write_jobs))
    worker("write", str(root / "write.json"))
    for cid, dtype, filters, comp, extra in CASES:
        kw = {k: v for k, v in extra.items() if k != "fill_value"}
        if "object_codec" in kw:
            filters = [kw.pop("object_codec"), *(filters or [])]
        recorded = json.loads((root / "a" / cid / ".zarray").read_text())
        fill = ArrayMetadataV2.from_json(recorded).fill_value
        if np.dtype(
            object
            if str(dtype).startswith("object")
            else np.dtype([tuple(f) for f in dtype] if isinstance(dtype, list) else dtype)
        ).hasobject:
            fill = fill if isinstance(fill, str) else None
        np_dtype: Any = {"object": str, "object-bytes": bytes}.get(str(dtype), dtype)
        if isinstance(dtype, list):
            np_dtype = [tuple(f) for f in dtype]
        b = zarrox.create_array(
            root / "b",
            name=cid,
            shape=SHAPE,
            chunks=CHUNKS,
            dtype=np_dtype,
            zarr_format=2,
            compressors=comp,
            filters=filters,
            fill_value=fill,
            **kw,
        )
        b[region] = load(data_dir / f"{cid}.npy")[region]
    (root / "read.json").write_text(json.dumps(read_jobs))
    worker("read", str(root / "read.json"))
    return {"root": root}


def normalized(config: Any) -> Any:
    """A codec config with defaults filled (zarr 2.18 writes zstd's checksum: false,
    zarr 3.1 leaves it out)."""
    if isinstance(config, dict) and config.get("id") == "zstd":
        return {"checksum": False, **config}
    return config


def load(path: Path) -> np.ndarray:
    return np.load(path, allow_pickle=True)


def assert_same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    if want.dtype == object or got.dtype == object or got.dtype.kind == "T":
        assert [str(v) if not isinstance(v, bytes) else v for v in got.ravel()] == [
            str(v) if not isinstance(v, bytes) else v for v in want.ravel()
        ]
        return
    assert got.dtype.newbyteorder("=") == want.dtype.newbyteorder("="), (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("cid", IDS)
def test_zarr2_writes_zarrox_reads(stores: dict[str, Path], cid: str) -> None:
    root = stores["root"]
    want = load(root / f"ref-a-{cid}.npy")
    a = zarrox.open_array(root / "a", path=cid, mode="r")
    assert a.zarr_format == 2
    got = a[...]
    if want.dtype == object:
        # zarr 2.18 returns the stored fill (0 or None) in missing chunks of object
        # arrays; zarrox, like zarr-python 3, returns an empty str/bytes there.
        assert_same(got[: REGION[0]], want[: REGION[0]])
        empty = "" if cid.startswith("strings") else b""
        assert all(v == empty for v in got[REGION[0] :].ravel())
        return
    assert_same(got, want)
    assert_same(a[1:8:3, ::2], want[1:8:3, ::2])


@pytest.mark.parametrize("cid", IDS)
def test_zarrox_writes_zarr2_reads(stores: dict[str, Path], cid: str) -> None:
    root = stores["root"]
    got = load(root / f"ref-b-{cid}.npy")
    # Same codecs, same data, same fill: zarr 2.18 reads zarrox's array as its own.
    want = load(root / f"ref-a-{cid}.npy")
    if want.dtype == object:
        assert_same(got[: REGION[0]], want[: REGION[0]])
        assert_same(zarrox.open_array(root / "b", path=cid)[: REGION[0]], got[: REGION[0]])
        return
    assert_same(got, want)
    assert_same(zarrox.open_array(root / "b", path=cid)[...], got)
    zarray_a = json.loads((root / "a" / cid / ".zarray").read_text())
    zarray_b = json.loads((root / "b" / cid / ".zarray").read_text())
    for key in ("shape", "chunks", "dtype", "order", "filters", "compressor"):
        if key == "filters" and zarray_a.get("filters") is None:
            assert not zarray_b.get("filters") or zarray_b["filters"][0]["id"].startswith("vlen")
            continue
        assert normalized(zarray_a[key]) == normalized(zarray_b[key]), key


@pytest.mark.parametrize(
    "cid", ["i4-zlib1", "F-order", "strings", "strings-F", "delta", "dtype<U3"]
)
def test_zarr_python_3_reads_zarrox_v2(stores: dict[str, Path], cid: str) -> None:
    root = stores["root"]
    z = zarr.open_array(str(root / "b"), path=cid, mode="r")
    want = load(root / f"ref-b-{cid}.npy")
    if want.dtype == object:
        # a null fill (as zarr 2.18's own "a" copy has): zarr 2.18 reads missing chunks of
        # object arrays as None, zarr-python 3 as "", so only the written region compares
        assert_same(np.asarray(z[: REGION[0]]), want[: REGION[0]])
        assert all(v == "" for v in np.asarray(z[REGION[0] :]).ravel())
        return
    assert_same(np.asarray(z[...]), want)


def _chunk_files(path: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted(path.iterdir()) if not f.name.startswith(".")}


def _vlen_values(shape: tuple[int, ...], kind: str, tag: str) -> np.ndarray:
    n = int(np.prod(shape))
    text = [f"{tag}{i}é" * (i % 4) for i in range(n)]
    values = text if kind == "str" else [t.encode() + b"\x00" * (i % 2) for i, t in enumerate(text)]
    return np.array(values, dtype=object).reshape(shape)


@pytest.mark.parametrize("kind", ["str", "bytes"])
@pytest.mark.parametrize("writer", ["zarr2", "zarr3"])
@pytest.mark.parametrize(
    "shape,chunks,region",
    [((7, 5), (3, 2), (5, 5)), ((5, 4, 3), (2, 3, 2), (3, 4, 3))],
    ids=["2d", "3d"],
)
def test_object_arrays_in_F_order_match_zarr_python(
    tmp_path: Path,
    zarr2_available: None,
    kind: str,
    writer: str,
    shape: tuple[int, ...],
    chunks: tuple[int, ...],
    region: tuple[int, ...],
) -> None:
    """Object arrays (vlen-utf8 / vlen-bytes) in F order: zarr-python 2.18 and 3.1
    serialize each chunk's elements in Fortran order. zarrox reads their arrays (edge
    chunks, missing chunks), writes the same chunk bytes, and a partial write into
    existing chunks gives the bytes zarr-python's gives."""
    sel = tuple(slice(0, r) for r in region)
    data = _vlen_values(shape, kind, "v")
    codec_id = "vlen-utf8" if kind == "str" else "vlen-bytes"
    ref = tmp_path / "ref"
    if writer == "zarr2":
        np.save(tmp_path / "data.npy", data, allow_pickle=True)
        job = {
            "store": str(ref),
            "path": "",
            "region": list(region),
            "kwargs": {
                "shape": list(shape),
                "chunks": list(chunks),
                "dtype": "object",
                "object_codec": {"id": codec_id},
                "order": "F",
                "compressor": None,
                # zarr 2.18 pads edge chunks with the fill value: "" breaks vlen-bytes
                "fill_value": "" if kind == "str" else None,
            },
            "data": str(tmp_path / "data.npy"),
        }
        (tmp_path / "write.json").write_text(json.dumps([job]))
        worker("write", str(tmp_path / "write.json"))
    else:
        z = zarr.create_array(
            str(ref),
            shape=shape,
            chunks=chunks,
            dtype=str if kind == "str" else zarr.dtype.VariableLengthBytes(),
            zarr_format=2,
            order="F",
            compressors=None,
        )
        z[sel] = data[sel]
    zarray = json.loads((ref / ".zarray").read_text())
    assert zarray["order"] == "F" and zarray["filters"] == [{"id": codec_id}]
    empty = "" if kind == "str" else b""
    want = np.full(shape, empty, dtype=object)
    want[sel] = data[sel]

    # zarrox reads zarr-python's chunks (elements in F order, edge and missing chunks)
    a = zarrox.open_array(ref, mode="r")
    assert a[...].tolist() == want.tolist()
    picks = (slice(1, None, 2),) * len(shape)
    assert a[picks].tolist() == want[picks].tolist()
    assert len(_chunk_files(ref)) < np.prod(
        [-(-s // c) for s, c in zip(shape, chunks, strict=True)]
    )

    # zarrox writes the same bytes
    x = zarrox.create_array(
        tmp_path / "x",
        shape=shape,
        chunks=chunks,
        dtype=str if kind == "str" else bytes,
        zarr_format=2,
        order="F",
        compressors=None,
        fill_value=zarray["fill_value"],
    )
    x[sel] = data[sel]
    assert _chunk_files(tmp_path / "x") == _chunk_files(ref)

    # a partial write into existing chunks, by zarr-python and by zarrox
    part = (slice(1, 3), 2) + (slice(None, None, 2),) * (len(shape) - 2)
    new = _vlen_values(want[part].shape, kind, "w")
    zarr.open_array(str(ref), mode="r+")[part] = new
    x[part] = new
    want[part] = new
    assert _chunk_files(tmp_path / "x") == _chunk_files(ref)
    assert zarrox.open_array(tmp_path / "x", mode="r")[...].tolist() == want.tolist()
    assert zarr.open_array(str(tmp_path / "x"), mode="r")[...].tolist() == want.tolist()

    # zarr 2.18 reads zarrox's array (its missing chunks: the fill value "" as a str)
    (tmp_path / "read.json").write_text(
        json.dumps([{"store": str(tmp_path / "x"), "path": "", "out": str(tmp_path / "o.npy")}])
    )
    worker("read", str(tmp_path / "read.json"))
    assert load(tmp_path / "o.npy")[sel].tolist() == want[sel].tolist()


@pytest.mark.parametrize("kind", ["str", "bytes"])
@pytest.mark.parametrize("order", [(1, 0), (2, 0, 1)], ids=["2d", "3d"])
def test_v3_transpose_before_vlen_codecs(tmp_path: Path, kind: str, order: tuple[int, ...]) -> None:
    """``transpose`` then ``vlen-utf8`` / ``vlen-bytes`` in a v3 array. The vlen codec
    serializes the transposed chunk in C order (as zarr-python 3.1 decodes it; its
    encoder keeps the untransposed order, zarr-python issue #3558, so its own chunks
    are compared through its reads)."""
    import numcodecs
    from zarr.codecs import TransposeCodec

    shape = (5, 3) if len(order) == 2 else (3, 5, 4)
    chunks = (2, 2) if len(order) == 2 else (2, 3, 3)
    data = _vlen_values(shape, kind, "t")
    dtype: Any = str if kind == "str" else bytes
    vlen = numcodecs.VLenUTF8() if kind == "str" else numcodecs.VLenBytes()
    fill = "f" if kind == "str" else b"f"
    x = zarrox.create_array(
        tmp_path / "x",
        shape=shape,
        chunks=chunks,
        dtype=dtype,
        fill_value=fill,
        filters=[{"name": "transpose", "configuration": {"order": list(order)}}],
        compressors=None,
    )
    x[...] = data
    # each chunk: the padded chunk, transposed, its elements in C order
    for key in [
        (0,) * len(shape),
        tuple(-(-s // c) - 1 for s, c in zip(shape, chunks, strict=True)),
    ]:
        chunk = np.full(chunks, fill, dtype=object)
        region = tuple(
            slice(k * c, min((k + 1) * c, s)) for k, c, s in zip(key, chunks, shape, strict=True)
        )
        part = data[region]
        chunk[tuple(slice(0, n) for n in part.shape)] = part
        want = vlen.encode(np.ascontiguousarray(chunk.transpose(order)))
        assert (tmp_path / "x" / "c").joinpath(*map(str, key)).read_bytes() == want
    assert zarr.open_array(str(tmp_path / "x"), mode="r")[...].tolist() == data.tolist()
    assert zarrox.open_array(tmp_path / "x", mode="r")[...].tolist() == data.tolist()

    z = zarr.create_array(
        str(tmp_path / "z"),
        shape=shape,
        chunks=chunks,
        dtype=str if kind == "str" else zarr.dtype.VariableLengthBytes(),
        fill_value=fill,
        filters=[TransposeCodec(order=order)],
        compressors=None,
    )
    z[...] = data
    got = zarrox.open_array(tmp_path / "z", mode="r")
    assert got[...].tolist() == np.asarray(z[...]).tolist()
    assert got[1:, ::2].tolist() == np.asarray(z[1:, ::2]).tolist()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dtype": "int16", "compressors": None},
        {"dtype": "float32", "compressors": {"id": "zstd", "level": 1}, "fill_value": np.nan},
        {
            "dtype": ">u4",
            "compressors": {
                "id": "blosc",
                "cname": "zstd",
                "clevel": 3,
                "shuffle": 2,
                "blocksize": 0,
            },
            "order": "F",
        },
        {"dtype": "<M8[ms]", "compressors": {"id": "gzip", "level": 1}},
        {"dtype": str, "compressors": {"id": "zstd", "level": 0}},
    ],
)
def test_zarr_python_3_writes_v2_zarrox_reads(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    kw = dict(kwargs)
    comp = kw.pop("compressors")
    z = zarr.create_array(
        str(tmp_path), shape=(10, 6), chunks=(4, 4), zarr_format=2, compressors=comp, **kw
    )
    dt = np.dtype(kw["dtype"]) if kw["dtype"] is not str else None
    data = (
        np.array([[f"{i}-{j}" for j in range(6)] for i in range(10)])
        if dt is None
        else np.arange(60).reshape(10, 6).astype(dt)
    )
    z[:7] = data[:7]
    got = zarrox.open_array(tmp_path, mode="r")[...]
    assert_same(got, np.asarray(z[...]))


@pytest.mark.parametrize(
    "dtype,astype,order",
    [("<U3", "|u1", "C"), (">U3", "<u2", "F"), ("<U2", ">i4", "C"), ("<U3", "<f4", "C")],
)
def test_categorize_filter_matches_zarr_python(
    tmp_path: Path, dtype: str, astype: str, order: str
) -> None:
    """numcodecs' Categorize (labels -> 1-based codes, 0 for any other string), written by
    zarr-python and by zarrox: the same files, each reads the other's."""
    import numcodecs

    labels = ["a", "bb", "ccc", "bb", "dddd"]  # "bb" twice, "dddd" longer than some dtypes
    data = np.array([["a", "ccc", "bb", "zz"], ["", "dddd"[: int(dtype[2:])], "a", "é"]] * 2)
    data = data.astype(dtype)
    kw: dict[str, Any] = {
        "shape": data.shape,
        "chunks": (3, 3),
        "dtype": dtype,
        "filters": [numcodecs.Categorize(labels=labels, dtype=dtype, astype=astype)],
        "compressors": None,
        "zarr_format": 2,
        "fill_value": "",
        "order": order,
    }
    zp = zarr.create_array(str(tmp_path / "zp"), **kw)
    zp[:3] = data[:3]
    zx = zarrox.create_array(tmp_path / "zx", **kw)
    zx[:3] = data[:3]
    files = sorted(p.name for p in (tmp_path / "zp").iterdir() if p.name != ".zattrs")
    assert files == sorted(p.name for p in (tmp_path / "zx").iterdir() if p.name != ".zattrs")
    for name in files:
        assert (tmp_path / "zx" / name).read_bytes() == (tmp_path / "zp" / name).read_bytes()
    want = np.asarray(zp[...])
    assert want[0, 3] == "" and want[0, 0] == "a"  # "zz" is no label: it reads back empty
    assert_same(zarrox.open_array(tmp_path / "zp", mode="r")[...], want)
    assert_same(np.asarray(zarr.open_array(str(tmp_path / "zx"), mode="r")[...]), want)


@pytest.mark.parametrize("member", ["compressors", "filters"])
def test_base64_codec_matches_zarr_python(tmp_path: Path, member: str) -> None:
    import numcodecs

    kw: dict[str, Any] = {"shape": (7, 3), "chunks": (3, 2), "dtype": ">i2", "zarr_format": 2}
    kw.update(compressors=None, filters=None)
    kw[member] = [numcodecs.Base64()] if member == "filters" else numcodecs.Base64()
    data = np.arange(21, dtype=">i2").reshape(7, 3) * 1111
    zp = zarr.create_array(str(tmp_path / "zp"), **kw)
    zp[:5] = data[:5]
    zx = zarrox.create_array(tmp_path / "zx", **kw)
    zx[:5] = data[:5]
    names = sorted(p.name for p in (tmp_path / "zp").iterdir() if p.name != ".zattrs")
    assert "0.0" in names and (tmp_path / "zp" / "0.0").read_bytes().isascii()
    for name in names:
        assert (tmp_path / "zx" / name).read_bytes() == (tmp_path / "zp" / name).read_bytes()
    assert_same(zarrox.open_array(tmp_path / "zp", mode="r")[...], np.asarray(zp[...]))
    (tmp_path / "zp" / "0.0").write_bytes(b"AAAAAAAAAAAAAA=A")  # not base64: named
    with pytest.raises(Exception, match=r"0\.0.*not base64"):
        zarrox.open_array(tmp_path / "zp", mode="r")[...]


def test_categorize_of_an_object_array_is_refused(tmp_path: Path) -> None:
    import numcodecs

    (tmp_path / ".zarray").write_text(
        json.dumps(
            {
                "zarr_format": 2,
                "shape": [2],
                "chunks": [2],
                "dtype": "|O",
                "compressor": None,
                "fill_value": None,
                "order": "C",
                "filters": [numcodecs.Categorize(["a"], dtype=object).get_config()],
            }
        )
    )
    with pytest.raises(UnsupportedError, match="vlen-utf8 or vlen-bytes codec.*'categorize'"):
        zarrox.open_array(tmp_path, mode="r")


def test_consolidated_metadata_both_ways(stores: dict[str, Path]) -> None:
    root = stores["root"]
    # zarr 2.18 consolidates what it wrote; zarrox reads the hierarchy through it.
    worker("consolidate", str(root / "a"))
    assert (root / "a" / ".zmetadata").exists()
    g = zarrox.open_consolidated(root / "a")
    assert sorted(g.array_keys()) == sorted(IDS)
    assert_same(g["delta"][...], load(root / "ref-a-delta.npy"))
    # zarrox consolidates its own; zarr 2.18 opens it consolidated.
    (root / "b" / ".zgroup").write_text('{"zarr_format": 2}')
    zarrox.consolidate_metadata(root / "b")
    out = root / "consolidated-read.npy"
    worker("read-consolidated", str(root / "b"), "strings", str(out))
    assert_same(load(out), load(root / "ref-b-strings.npy"))


def test_open_group_uses_zmetadata_without_listing(tmp_path: Path) -> None:
    g = zarrox.create_group(tmp_path, zarr_format=2, attributes={"k": 1})
    a = g.create_array("x", shape=(4,), chunks=(2,), dtype="i2", compressors=None)
    assert a.zarr_format == 2
    a[...] = [1, 2, 3, 4]
    zarrox.consolidate_metadata(tmp_path)
    # Remove the node's own metadata: only .zmetadata can still describe it.
    (tmp_path / "x" / ".zarray").rename(tmp_path / "x" / ".zarray.bak")
    g2 = zarrox.open_group(tmp_path, mode="r")
    assert list(g2) == ["x"] and g2.attrs["k"] == 1
    np.testing.assert_array_equal(g2["x"][...], [1, 2, 3, 4])
    assert list(zarrox.open_group(tmp_path, mode="r", use_consolidated=False)) == []


@pytest.mark.parametrize(
    "zarray,exc,match",
    [
        ('{"zarr_format": 2, "shape": [4]}', MetadataError, "chunks"),
        (
            '{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": '
            '{"id": "nope"}, "fill_value": 0, "order": "C", "filters": null}',
            UnsupportedError,
            "nope",
        ),
        (
            '{"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<q9", "compressor": null,'
            ' "fill_value": 0, "order": "C", "filters": null}',
            MetadataError,
            "dtype",
        ),
        ("not json", MetadataError, "JSON"),
    ],
)
def test_malformed_zarray_errors(tmp_path: Path, zarray: str, exc: type, match: str) -> None:
    (tmp_path / "arr").mkdir()
    (tmp_path / "arr" / ".zarray").write_text(zarray)
    with pytest.raises(exc, match=match) as info:
        zarrox.open_array(tmp_path, path="arr", mode="r")
    assert "arr" in str(info.value)


def test_corrupt_v2_chunk_names_the_key(tmp_path: Path) -> None:
    a = zarrox.create_array(
        tmp_path,
        shape=(4,),
        chunks=(2,),
        dtype="i4",
        zarr_format=2,
        compressors={"id": "zlib", "level": 1},
    )
    a[...] = [1, 2, 3, 4]
    (tmp_path / "1").write_bytes(b"garbage")
    with pytest.raises(zarrox.errors.CorruptChunkError, match="chunk '1'"):
        a[...]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


@pytest.mark.parametrize(
    "compressor,filters,verbatim",
    [
        ({"id": "zstd", "level": 3, "checksum": True}, None, True),
        ({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0}, None, True),
        ({"id": "gzip", "level": 1}, None, True),
        (None, None, True),
        ({"id": "zlib", "level": 1}, None, False),
        ({"id": "lz4", "acceleration": 1}, None, False),
        (None, [{"id": "delta", "dtype": ">i4"}], False),
    ],
)
@pytest.mark.parametrize("in_place", [False, True])
def test_convert_v2_to_v3(
    tmp_path: Path, compressor: Any, filters: Any, verbatim: bool, in_place: bool
) -> None:
    src = tmp_path / "src"
    data = np.arange(90, dtype=">i4").reshape(9, 10)
    a = zarrox.create_array(
        src,
        name="g/a",
        shape=(9, 10),
        chunks=(4, 4),
        dtype=">i4",
        zarr_format=2,
        compressors=compressor,
        filters=filters,
        order="F",
        fill_value=-1,
        attributes={"units": "m"},
    )
    a[:6] = data[:6]
    stored_before = {
        p.name: p.read_bytes() for p in (src / "g" / "a").iterdir() if not p.name.startswith(".")
    }
    dest = None if in_place else tmp_path / "dst"
    root = zarrox.convert(src, dest)
    assert isinstance(root, zarrox.Group) and root.zarr_format == 3
    out_root = src if in_place else tmp_path / "dst"
    b = zarrox.open_array(out_root, path="g/a", mode="r")
    assert b.zarr_format == 3 and b.attrs["units"] == "m" and b.fill_value == -1
    expected = np.full((9, 10), -1)
    expected[:6] = data[:6]
    np.testing.assert_array_equal(b[...], expected)
    node_dir = out_root / "g" / "a"
    assert not (node_dir / ".zarray").exists() and (node_dir / "zarr.json").exists()
    if verbatim:
        # Same bytes under the same (v2-encoded) keys: nothing was re-encoded.
        after = {
            p.name: p.read_bytes()
            for p in node_dir.iterdir()
            if not p.name.startswith(".") and p.name != "zarr.json"
        }
        assert after == stored_before
    else:
        assert not any(name in stored_before for name in [p.name for p in node_dir.iterdir()])
    # tensorstore and zarr-python read the converted array.
    z = zarr.open_array(str(out_root), path="g/a", mode="r")
    np.testing.assert_array_equal(z[...], expected)


def test_convert_to_sharded_copy(tmp_path: Path) -> None:
    a = zarrox.create_array(
        tmp_path / "src",
        shape=(16, 16),
        chunks=(4, 4),
        dtype="u2",
        zarr_format=2,
        compressors={"id": "zlib", "level": 1},
    )
    a[...] = np.arange(256).reshape(16, 16)
    b = zarrox.convert(tmp_path / "src", tmp_path / "dst", shards=(8, 8))
    assert isinstance(b, zarrox.Array)
    assert (b.chunks, b.shards) == ((4, 4), (8, 8))
    np.testing.assert_array_equal(b[...], np.arange(256).reshape(16, 16))
    with pytest.raises(zarrox.errors.ContainsNodeError):
        zarrox.convert(tmp_path / "src", tmp_path / "dst")


@pytest.mark.parametrize(
    "filters,compressors",
    [
        ([("Delta", {"dtype": "i4"})], [("Zlib", {"level": 2})]),
        ([], [("Shuffle", {"elementsize": 4}), ("BZ2", {"level": 3})]),
        (
            [("FixedScaleOffset", {"offset": 0, "scale": 10, "dtype": "i4", "astype": "i2"})],
            [("LZ4", {})],
        ),
        ([], [("LZMA", {}), ("CRC32", {})]),
    ],
)
def test_numcodecs_codecs_in_v3_arrays(
    tmp_path: Path,
    filters: list[tuple[str, dict[str, Any]]],
    compressors: list[tuple[str, dict[str, Any]]],
) -> None:
    """zarr-python 3 writes numcodecs codecs into v3 metadata as numcodecs.<id>;
    zarrox reads and writes those arrays."""
    import numcodecs.zarr3 as nz

    def make(specs: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        return [getattr(nz, name)(**kw) for name, kw in specs]

    z = zarr.create_array(
        str(tmp_path),
        shape=(20,),
        chunks=(6,),
        dtype="i4",
        filters=make(filters) or None,
        compressors=make(compressors),
    )
    z[:15] = np.arange(15) * 7
    a = zarrox.open_array(tmp_path)
    assert any(c["name"].startswith("numcodecs.") for c in a.metadata.codecs)
    np.testing.assert_array_equal(a[...], z[...])
    a[10:] = -np.arange(10)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path))[...], a[...])


@pytest.mark.parametrize(
    "dtype,filters",
    [
        (
            ">f8",
            [
                {
                    "id": "fixedscaleoffset",
                    "offset": 3.5,
                    "scale": 10,
                    "dtype": ">f8",
                    "astype": "<i2",
                }
            ],
        ),
        (
            "<f4",
            [{"id": "fixedscaleoffset", "offset": 0, "scale": 4, "dtype": "<f4", "astype": ">i4"}],
        ),
        ("<i4", [{"id": "astype", "encode_dtype": ">i4", "decode_dtype": "<i4"}]),
        ("|u1", [{"id": "astype", "encode_dtype": ">i4", "decode_dtype": "|u1"}]),
        (">f8", [{"id": "quantize", "digits": 2, "dtype": ">f8", "astype": "<f4"}]),
        (
            ">i2",
            [{"id": "delta", "dtype": ">i2", "astype": "<i4"}, {"id": "shuffle", "elementsize": 4}],
        ),
    ],
)
def test_value_filter_output_byte_order_matches_numcodecs(
    tmp_path: Path, dtype: str, filters: list[dict[str, Any]]
) -> None:
    """numcodecs stores a value filter's output in the byte order of its output type
    (astype / encode_dtype), whatever the array's byte order."""
    import numcodecs

    data = (np.arange(24).reshape(4, 6) % 11).astype(dtype)
    a = zarrox.create_array(
        tmp_path,
        shape=(4, 6),
        chunks=(4, 6),
        dtype=dtype,
        zarr_format=2,
        compressors=None,
        filters=filters,
    )
    a[...] = data
    codecs = [numcodecs.get_codec(dict(f)) for f in filters]
    want: Any = data
    for c in codecs:
        want = c.encode(want)
    assert (tmp_path / "0.0").read_bytes() == np.ascontiguousarray(want).tobytes()
    # And what numcodecs wrote reads back as numcodecs decodes it.
    (tmp_path / "0.0").write_bytes(np.ascontiguousarray(want).tobytes())
    decoded: Any = (tmp_path / "0.0").read_bytes()
    for c in reversed(codecs):
        decoded = c.decode(decoded)
    expected = np.frombuffer(np.ascontiguousarray(decoded).tobytes(), dtype=dtype).reshape(4, 6)
    np.testing.assert_array_equal(zarrox.open_array(tmp_path, mode="r")[...], expected)


def test_value_filter_input_byte_order_mismatch_is_unsupported(tmp_path: Path) -> None:
    # numcodecs would view the big-endian chunk as '<i4' (garbage values): refuse.
    with pytest.raises(UnsupportedError, match=r"filters\[0\]: dtype '<i4'.*byte order"):
        zarrox.create_array(
            tmp_path,
            shape=(4,),
            dtype=">i4",
            zarr_format=2,
            filters=[{"id": "delta", "dtype": "i4"}],
        )


def test_array_at_store_root_has_no_zgroup(tmp_path: Path) -> None:
    """zarr-python writes only .zarray/.zattrs for an array at the root; a .zgroup
    beside them made the root both a group and an array."""
    zarr.create_array(str(tmp_path / "ref"), shape=(3,), dtype="i4", zarr_format=2)
    a = zarrox.create_array(tmp_path / "ours", shape=(3,), dtype="i4", zarr_format=2)
    a[...] = [1, 2, 3]
    meta = {p.name for p in (tmp_path / "ours").iterdir() if p.name.startswith(".")}
    assert meta == {p.name for p in (tmp_path / "ref").iterdir()} == {".zarray", ".zattrs"}
    with pytest.raises(Exception, match="group"):
        zarr.open_group(str(tmp_path / "ours"), mode="r")
    # Below the root, ancestors still get their .zgroup.
    zarrox.create_array(tmp_path / "nested", name="g/a", shape=(3,), dtype="i4", zarr_format=2)
    assert (tmp_path / "nested" / ".zgroup").exists() and (
        tmp_path / "nested" / "g" / ".zgroup"
    ).exists()
    assert not (tmp_path / "nested" / "g" / "a" / ".zgroup").exists()


@pytest.mark.parametrize(
    "dtype,filters",
    [
        ("<i4", [{"id": "crc32"}]),
        ("<i4", [{"id": "shuffle", "elementsize": 4}]),
        ("<i2", [{"id": "delta", "dtype": "<i2"}, {"id": "adler32"}]),
        (str, None),
        (bytes, None),
    ],
)
@pytest.mark.parametrize("shuffle", [-1, 1])
def test_blosc_after_bytes_filters_uses_typesize_1_like_numcodecs(
    tmp_path: Path, dtype: Any, filters: Any, shuffle: int
) -> None:
    """numcodecs' Blosc takes the item size of what it is given: 1 after a bytes
    filter or a vlen codec (and with shuffle -1, bit shuffle then)."""
    import numcodecs

    blosc = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": shuffle, "blocksize": 0}
    if dtype in (str, bytes):
        data = np.array(["ab", "cde", "", "x"] * 8, dtype=object)
        if dtype is bytes:
            data = np.array([s.encode() for s in data], dtype=object)
    else:
        data = (np.arange(32) * 7 % 13).astype(dtype)
    a = zarrox.create_array(
        tmp_path,
        shape=(32,),
        chunks=(32,),
        dtype=dtype,
        zarr_format=2,
        compressors=blosc,
        filters=filters,
    )
    a[...] = data
    stored = json.loads((tmp_path / ".zarray").read_text())
    want: Any = data
    for f in stored["filters"] or []:
        want = numcodecs.get_codec(f).encode(want)
    want = numcodecs.get_codec(stored["compressor"]).encode(want)
    assert (tmp_path / "0").read_bytes() == bytes(want)
    assert list(zarrox.open_array(tmp_path)[...]) == list(data)
