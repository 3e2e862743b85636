"""The codecs zarr-python 3.4 writes, byte for byte, through both front doors.

``scale_offset`` and ``cast_value`` (registry codecs zarr-python 3.4 implements),
``numcodecs.pcodec`` and ``numcodecs.zfpy`` (array->bytes codecs), fixed-size numcodecs
checksums in a shard's ``index_codecs``, and shards with inner chunks in Morton order.

- Fixtures (every run): arrays zarr-python 3.4.2 wrote (``fixtures/zarr34``, made by
  ``make_zarr34_fixtures.py``) read with zarrox's own API and, where the installed zarr-python
  knows the codecs, with zarr-python on zarrox's pipeline; zarrox writing the same input with
  the same ``create_array`` arguments must produce the same ``zarr.json`` and the same bytes.
- Live (zarr-python >= 3.4 with its cast backend, pcodec, zfpy importable): random data
  written by one and read by the other, the bytes compared, and errors where zarr-python
  raises.
- The metadata layer's checks, and the registry's ``bitround`` and ``reshape`` codecs (which
  zarr-python does not implement) against numpy-computed values.
"""

from __future__ import annotations

import importlib.util
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zarr
from packaging.version import Version

import zarrox
from conftest import assert_identical, chunk_files
from make_zarr34_fixtures import python_kwargs
from zarrox.errors import MetadataError, UnsupportedError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "zarr34"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
CASES = sorted(MANIFEST["arrays"])
ZARROX_PIPELINE = {
    "codec_pipeline.path": "zarrox.ZarroxCodecPipeline",
    "codec_pipeline.strict": True,
}

ZARR34 = Version(zarr.__version__) >= Version("3.4")
HAS_CAST_BACKEND = importlib.util.find_spec("cast_value_rs") is not None


def _numcodecs_has(codec_id: str) -> bool:
    try:
        import numcodecs

        numcodecs.get_codec({"id": codec_id})
    except Exception:  # noqa: BLE001  (missing package, or numcodecs failing to import it)
        return False
    return True


HAS_PCODEC = _numcodecs_has("pcodec")
HAS_ZFPY = _numcodecs_has("zfpy")


def _codec_names(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        if isinstance(value.get("name"), str):
            yield value["name"]
        for v in value.values():
            yield from _codec_names(v)
    elif isinstance(value, list):
        for v in value:
            yield from _codec_names(v)


def _zarr_missing(create: dict[str, Any]) -> str | None:
    """Why the installed zarr-python cannot write or read an array made with ``create``."""
    names = set(_codec_names(create))
    if names & {"scale_offset", "cast_value"} and not ZARR34:
        return f"zarr-python {zarr.__version__} has no scale_offset/cast_value (needs 3.4)"
    if "cast_value" in names and not HAS_CAST_BACKEND:
        return "zarr-python's cast_value needs cast-value-rs"
    if "numcodecs.pcodec" in names and not HAS_PCODEC:
        return "numcodecs.pcodec needs the pcodec package"
    if "numcodecs.zfpy" in names and not HAS_ZFPY:
        return "numcodecs.zfpy needs a zfpy numcodecs can import"
    return None


def _same_store(written: Path, reference: Path, what: str) -> None:
    """Same zarr.json (as JSON) and the same chunk files, byte for byte."""
    assert json.loads((written / "zarr.json").read_text()) == json.loads(
        (reference / "zarr.json").read_text()
    ), f"{what}: zarr.json differs"
    assert chunk_files(written) == chunk_files(reference), f"{what}: chunk keys differ"
    for key in sorted(chunk_files(reference)):
        assert (written / key).read_bytes() == (reference / key).read_bytes(), (
            f"{what}: chunk {key} differs"
        )


@pytest.fixture
def quiet() -> Iterator[None]:
    """zarr-python warns about numcodecs codecs and unstable specifications."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# --------------------------------------------------------------------------------------------
# Arrays zarr-python 3.4.2 wrote
# --------------------------------------------------------------------------------------------


def test_fixtures_were_written_by_zarr_python_3_4() -> None:
    versions = MANIFEST["versions"]
    assert Version(versions["zarr"]) >= Version("3.4")
    assert {"pcodec", "zfpy", "cast-value-rs", "numcodecs"} <= set(versions)
    total = sum(f.stat().st_size for f in FIXTURES.rglob("*") if f.is_file())
    assert total < 200_000, f"the zarr34 fixtures take {total} bytes"


@pytest.mark.parametrize("name", CASES)
def test_fixture_reads_with_zarrox(name: str) -> None:
    got = zarrox.open_array(str(FIXTURES / "store"), path=name, mode="r")[...]
    assert_identical(got, np.load(FIXTURES / "expected" / f"{name}.npy"), name)


@pytest.mark.parametrize("name", CASES)
def test_fixture_written_again_by_zarrox_is_identical(name: str, tmp_path: Path) -> None:
    root = tmp_path / "store.zarr"
    a = zarrox.create_array(str(root), name=name, **python_kwargs(MANIFEST["arrays"][name]))
    a[...] = np.load(FIXTURES / "input" / f"{name}.npy")
    _same_store(root / name, FIXTURES / "store" / name, name)


@pytest.mark.parametrize("name", CASES)
def test_fixture_through_zarr_python_on_zarrox_pipeline(
    name: str, tmp_path: Path, quiet: None
) -> None:
    create = MANIFEST["arrays"][name]
    missing = _zarr_missing(create)
    if missing:
        pytest.skip(missing)
    expected = np.load(FIXTURES / "expected" / f"{name}.npy")
    with zarr.config.set(ZARROX_PIPELINE):
        a = zarr.open_array(str(FIXTURES / "store"), path=name, mode="r")
        assert type(a._async_array.codec_pipeline).__name__ == "ZarroxCodecPipeline"
        assert_identical(a[...], expected, name)
        root = tmp_path / "store.zarr"
        b = zarr.create_array(str(root), name=name, **python_kwargs(create))
        b[...] = np.load(FIXTURES / "input" / f"{name}.npy")
    _same_store(root / name, FIXTURES / "store" / name, name)


# --------------------------------------------------------------------------------------------
# Live comparisons with zarr-python 3.4
# --------------------------------------------------------------------------------------------

needs_zarr34 = pytest.mark.skipif(
    not (ZARR34 and HAS_CAST_BACKEND),
    reason="needs zarr-python >= 3.4 with cast-value-rs",
)

# (array dtype, target dtype, rounding, out_of_range, values written)
CAST_CASES = [
    ("float64", "uint8", "nearest-even", None, [0.5, 1.5, 2.5, 254.4, 0.0]),
    ("float64", "int8", "towards-zero", "wrap", [-1e3, -128.9, 127.9, 1e3, 0.7]),
    ("float32", "int16", "towards-positive", "clamp", [-1e9, -0.5, 0.5, 1e9, 7.2]),
    ("float32", "uint32", "towards-negative", "clamp", [-1.0, 0.5, 4e9, 5e9, 7.0]),
    ("float16", "int64", "nearest-away", None, [-2.5, 2.5, 65504, -65504, 0.0]),
    ("float64", "float16", "nearest-even", "clamp", [1e-8, 1e6, -1e6, np.nan, 0.1]),
    ("float64", "float32", "towards-zero", None, [0.1, -0.1, np.nan, -0.0, 1e38]),
    ("float32", "float64", "nearest-even", None, [0.1, np.nan, np.inf, -0.0, 3.5]),
    ("int64", "float32", "towards-positive", None, [2**40 + 1, -(2**40) - 1, 3, 0, 2**62]),
    ("uint64", "int8", "nearest-even", "wrap", [2**64 - 1, 128, 255, 256, 0]),
    ("int16", "uint8", "nearest-even", "clamp", [-5, 300, 255, 0, 128]),
    ("uint8", "float16", "nearest-even", None, [0, 255, 1, 2, 3]),
    ("int32", "int64", "nearest-even", None, [-(2**31), 2**31 - 1, 0, 1, -1]),
]


def _cast(target: str, **cfg: Any) -> dict[str, Any]:
    return {"name": "cast_value", "configuration": {"data_type": target, **cfg}}


def _scale_offset(**cfg: Any) -> dict[str, Any]:
    return {"name": "scale_offset", "configuration": cfg}


def _both_ways(root: Path, name: str, values: np.ndarray, **create: Any) -> None:
    """zarr-python writes and zarrox reads, zarrox writes and zarr-python reads (with its own
    pipeline): the same values, the same zarr.json, the same bytes."""
    ours, theirs = root / "zarrox", root / "zarr"
    create = {"shape": values.shape, "dtype": values.dtype, **create}
    z = zarr.create_array(str(theirs), name=name, **create)
    z[...] = values
    expected = z[...]
    assert_identical(zarrox.open_array(str(theirs), path=name)[...], expected, f"{name} read")
    x = zarrox.create_array(str(ours), name=name, **create)
    x[...] = values
    assert_identical(zarr.open_array(str(ours), path=name)[...], expected, f"{name} written")
    _same_store(ours / name, theirs / name, name)


@needs_zarr34
@pytest.mark.parametrize(("dtype", "target", "rounding", "oor", "values"), CAST_CASES)
def test_live_cast_value(
    tmp_path: Path,
    quiet: None,
    dtype: str,
    target: str,
    rounding: str,
    oor: str | None,
    values: list[Any],
) -> None:
    cfg: dict[str, Any] = {"rounding": rounding}
    if oor is not None:
        cfg["out_of_range"] = oor
    with np.errstate(all="ignore"):
        x = np.array(values * 3, dtype=dtype).reshape(3, 5)
    # zarr-python picks the default serializer for the array's type, not the cast's: name it.
    serializer = {"name": "bytes", "configuration": {"endian": "little"}}
    _both_ways(
        tmp_path, "a", x, chunks=(2, 5), filters=[_cast(target, **cfg)], serializer=serializer
    )


NUMERIC = [
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
]


def _probe_values(dtype: str) -> np.ndarray:
    """Values of ``dtype`` that exercise a cast: bounds, ties, specials."""
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        candidates = [
            int(info.min),
            int(info.max),
            0,
            1,
            -1,
            127,
            128,
            -129,
            255,
            256,
            32768,
            65535,
            65536,
            2**31,
            2**53 + 1,
            -(2**40),
        ]
        return np.array(sorted({c for c in candidates if info.min <= c <= info.max}), dt)
    with np.errstate(all="ignore"):
        x = np.array(
            [
                0.0,
                -0.0,
                0.5,
                1.5,
                -2.5,
                127.5,
                128.5,
                255.5,
                -128.7,
                65504.0,
                65520.0,
                4294967295.5,
                1e10,
                3e38,
                1e300,
                -1e300,
                np.inf,
                -np.inf,
                np.nan,
                1e-8,
            ],
            dtype=dt,
        )
    return x


def _outcome(action: Any, *args: Any) -> Any:
    """What ``action(*args)`` returns, or "error" if it raises ValueError."""
    try:
        return action(*args)
    except ValueError:
        return "error"


def _element_bytes(array: Any, i: int) -> bytes:
    return np.asarray(array[i]).tobytes()


@needs_zarr34
@pytest.mark.parametrize("target", NUMERIC)
@pytest.mark.parametrize("source", NUMERIC)
def test_live_cast_value_every_type_pair(
    tmp_path: Path, quiet: None, source: str, target: str
) -> None:
    """Each probe value cast on its own (one chunk each), encoding and decoding, in three
    configurations: zarrox succeeds or fails where zarr-python does, with the same bytes and
    values."""
    le = {"name": "bytes", "configuration": {"endian": "little"}}
    integral = np.dtype(target).kind in "iu"
    configs = [
        {},
        {"rounding": "towards-zero", "out_of_range": "clamp"},
        {"rounding": "nearest-away", "out_of_range": "wrap" if integral else "clamp"},
    ]
    x = _probe_values(source)
    raw = _probe_values(target)
    for i, cfg in enumerate(configs):
        create = {
            "shape": (len(x),),
            "chunks": (1,),
            "dtype": source,
            "compressors": None,
            "serializer": le,
            "filters": [_cast(target, **cfg)],
        }
        z = zarr.create_array(str(tmp_path / f"zarr{i}"), name="a", **create)
        a = zarrox.create_array(str(tmp_path / f"zarrox{i}"), name="a", **create)
        for j, v in enumerate(x):
            theirs = _outcome(z.__setitem__, j, v)
            ours = _outcome(a.__setitem__, j, v)
            assert ours == theirs, f"{cfg}: writing {v!r} ({source} -> {target})"
        _same_store(tmp_path / f"zarrox{i}" / "a", tmp_path / f"zarr{i}" / "a", f"{cfg}")
        # Decoding: every probe value of the target type, stored as a chunk, read back.
        d = zarr.create_array(
            str(tmp_path / f"raw{i}"), name="a", **{**create, "shape": (len(raw),)}
        )
        (tmp_path / f"raw{i}" / "a" / "c").mkdir()
        for j, v in enumerate(raw):
            (tmp_path / f"raw{i}" / "a" / "c" / str(j)).write_bytes(
                v.astype(v.dtype.newbyteorder("<")).tobytes()
            )
        b = zarrox.open_array(str(tmp_path / f"raw{i}"), path="a")
        for j, v in enumerate(raw):
            theirs = _outcome(_element_bytes, d, j)
            ours = _outcome(_element_bytes, b, j)
            assert ours == theirs, f"{cfg}: reading {v!r} ({target} -> {source})"


def _int64_overflows(dtype: str, value: Any, offset: int, scale: int, decode: bool) -> bool:
    """Whether scale_offset overflows int64 for ``value``: zarr-python 3.4.2 then wraps
    silently where the spec (and zarrox) raise."""
    if dtype != "int64":
        return False
    v = int(value)
    exact = v // scale + offset if decode else (v - offset) * scale
    return not -(2**63) <= exact < 2**63


@needs_zarr34
@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize(("offset", "scale"), [(3, 2), (-1, -1), (100, 1)])
def test_live_scale_offset_every_type(
    tmp_path: Path, quiet: None, dtype: str, offset: int, scale: int
) -> None:
    """Each probe value on its own, encoded and decoded: zarrox succeeds or fails where
    zarr-python does, with the same bytes and values."""
    if dtype.startswith("uint") and (offset < 0 or scale < 0):
        pytest.skip("negative offset or scale for an unsigned type")
    x = _probe_values(dtype)
    fill = offset if dtype[0] in "iu" else 0
    create = {
        "shape": (len(x),),
        "chunks": (1,),
        "dtype": dtype,
        "compressors": None,
        "fill_value": fill,
        "filters": [_scale_offset(offset=offset, scale=scale)],
    }
    z = zarr.create_array(str(tmp_path / "zarr"), name="a", **create)
    a = zarrox.create_array(str(tmp_path / "zarrox"), name="a", **create)
    for j, v in enumerate(x):
        ours = _outcome(a.__setitem__, j, v)
        if _int64_overflows(dtype, v, offset, scale, decode=False):
            assert ours == "error"
            continue
        assert ours == _outcome(z.__setitem__, j, v), f"writing {v!r}"
    _same_store(tmp_path / "zarrox" / "a", tmp_path / "zarr" / "a", dtype)
    # Decoding every probe value, stored as a chunk.
    d = zarr.create_array(str(tmp_path / "raw"), name="a", **create)
    (tmp_path / "raw" / "a" / "c").mkdir()
    for j, v in enumerate(x):
        (tmp_path / "raw" / "a" / "c" / str(j)).write_bytes(
            v.astype(v.dtype.newbyteorder("<")).tobytes()
        )
    b = zarrox.open_array(str(tmp_path / "raw"), path="a")
    for j, v in enumerate(x):
        ours = _outcome(_element_bytes, b, j)
        if _int64_overflows(dtype, v, offset, scale, decode=True):
            assert ours == "error"
            continue
        assert ours == _outcome(_element_bytes, d, j), f"reading {v!r}"


@needs_zarr34
@pytest.mark.parametrize(
    ("dtype", "offset", "scale", "values"),
    [
        ("int8", 10, 2, [10, 20, 70, -50, 11]),
        ("uint16", 1000, 3, [1000, 2000, 22845, 1001, 1002]),
        ("int64", -(2**40), -7, [0, 1, -1, 2**40, 5]),
        ("uint64", 1, 2**62, [1, 2, 4, 1, 1]),
        ("float16", "0.5", "0x4100", [0.5, 1, 65504, -3, np.nan]),
        ("float32", 1.5, "Infinity", [1.5, 2, -1, np.inf, 0]),
        ("float64", "-1e3", 1e-3, [0.1, 1e300, -1e300, np.nan, 7]),
        ("float64", 0, 1, [1, 2, 3, 4, 5]),
    ],
)
def test_live_scale_offset(
    tmp_path: Path, quiet: None, dtype: str, offset: Any, scale: Any, values: list[Any]
) -> None:
    with np.errstate(all="ignore"):
        x = np.array(values, dtype=dtype)
    # The fill value is encoded too: for integers, the offset itself encodes to 0.
    fill = offset if dtype[0] in "iu" else 0
    _both_ways(
        tmp_path,
        "a",
        x,
        chunks=(2,),
        fill_value=fill,
        filters=[_scale_offset(offset=offset, scale=scale)],
    )


@needs_zarr34
def test_live_scale_offset_and_cast_in_a_shard_with_checksummed_index(
    tmp_path: Path, quiet: None
) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(20, 5, (12, 10)).astype("float32")
    x[x < 12] = np.nan
    serializer = {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [3, 5],
            "codecs": [
                _scale_offset(offset=-10, scale=4),
                _cast(
                    "int8",
                    out_of_range="clamp",
                    scalar_map={"encode": [["NaN", -128]], "decode": [[-128, "NaN"]]},
                ),
                {"name": "bytes"},
            ],
            "index_codecs": [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "numcodecs.fletcher32", "configuration": {}},
            ],
            "index_location": "start",
        },
    }
    _both_ways(
        tmp_path, "a", x, chunks=(6, 10), fill_value=np.nan, serializer=serializer, compressors=None
    )


@needs_zarr34
@pytest.mark.parametrize(
    ("dtype", "filters", "values", "where"),
    [
        # zarr-python raises when writing these, and so must zarrox
        ("float64", [_cast("uint8")], [np.nan, 1], "write"),
        ("float64", [_cast("int8")], [128.0, 1], "write"),
        ("int16", [_cast("uint8")], [-1, 1], "write"),
        ("float64", [_cast("float16")], [1e6, 1], "write"),
        ("int8", [_scale_offset(offset=-100, scale=1)], [100, 1], "write"),
        ("uint32", [_scale_offset(scale=2**31)], [2, 1], "write"),
        # ... when creating these (the fill value 0 does not encode)
        ("uint8", [_scale_offset(offset=10)], [5, 20], "create"),
        ("float32", [_cast("int8", scalar_map={"encode": [["NaN", "0x01"]]})], [1, 2], "create"),
        # ... and when reading these
        ("int64", [_cast("float16", out_of_range="clamp")], [70000, 1], "read"),
    ],
)
def test_live_errors_where_zarr_python_raises(
    tmp_path: Path, quiet: None, dtype: str, filters: list[Any], values: list[Any], where: str
) -> None:
    x = np.array(values, dtype=dtype)
    create = {
        "shape": x.shape,
        "dtype": dtype,
        "chunks": (2,),
        "filters": filters,
        "compressors": None,
    }
    if where == "create":
        with pytest.raises(ValueError):
            zarr.create_array(str(tmp_path / "zarr"), name="a", **create)
        with pytest.raises(ValueError):
            zarrox.create_array(str(tmp_path / "zarrox"), name="a", **create)
        return
    z = zarr.create_array(str(tmp_path / "zarr"), name="a", **create)
    a = zarrox.create_array(str(tmp_path / "zarrox"), name="a", **create)
    if where == "write":
        with pytest.raises(ValueError):
            z[...] = x
        with pytest.raises(ValueError):
            a[...] = x
        return
    z[...] = x
    with pytest.raises(ValueError):
        z[...]
    with pytest.raises(ValueError, match="cast_value"):
        zarrox.open_array(str(tmp_path / "zarr"), path="a")[...]


def test_scale_offset_int64_overflow_is_an_error(tmp_path: Path) -> None:
    """The spec makes overflow an error. (zarr-python 3.4.2 computes int64 in int64 and
    wraps silently here; zarrox follows the spec.)"""
    a = zarrox.create_array(
        str(tmp_path), name="a", shape=(2,), dtype="int64", filters=[_scale_offset(scale=2**40)]
    )
    with pytest.raises(ValueError, match="outside the range"):
        a[...] = [2**30, 1]
    a[...] = [2**20, -(2**22)]
    assert_identical(a[...], np.array([2**20, -(2**22)], dtype="int64"))
    assert (tmp_path / "a" / "c" / "0").exists()


@needs_zarr34
def test_live_inexact_division_is_an_error_when_read(tmp_path: Path, quiet: None) -> None:
    """A stored integer that scale does not divide: zarr-python and zarrox refuse it."""
    z = zarr.create_array(
        str(tmp_path),
        name="a",
        shape=(2,),
        chunks=(2,),
        dtype="int32",
        filters=[_scale_offset(scale=3)],
        compressors=None,
    )
    z[...] = [3, 6]
    raw = tmp_path / "a" / "c" / "0"
    raw.write_bytes(np.array([3, 7], "<i4").tobytes())
    with pytest.raises(ValueError, match="remainder"):
        z[...]
    with pytest.raises(ValueError, match="remainder"):
        zarrox.open_array(str(tmp_path), path="a")[...]
    with zarr.config.set(ZARROX_PIPELINE), pytest.raises(ValueError, match="remainder"):
        zarr.open_array(str(tmp_path), path="a")[...]


@needs_zarr34
@pytest.mark.parametrize(
    "filters",
    [
        [_scale_offset()],
        [_scale_offset(offset=0, scale=1)],
        [_scale_offset(offset=0.0, scale="2")],
        [_cast("int16", rounding="nearest-even", out_of_range=None)],
        [_cast("uint8", scalar_map={"encode": [["NaN", 0], ["NaN", 1], [2, 3]]})],
        [_cast("float32", scalar_map={"decode": [], "encode": [[1.5, "Infinity"], ["2", 3]]})],
        [_scale_offset(offset="0x4024000000000000"), _cast("int32", out_of_range="wrap")],
    ],
)
def test_live_metadata_as_zarr_python_writes_it(
    tmp_path: Path, quiet: None, filters: list[Any]
) -> None:
    zarr.create_array(
        str(tmp_path / "zarr"), name="a", shape=(4,), dtype="float64", filters=filters
    )
    zarrox.create_array(
        str(tmp_path / "zarrox"), name="a", shape=(4,), dtype="float64", filters=filters
    )
    ours = json.loads((tmp_path / "zarrox" / "a" / "zarr.json").read_text())
    theirs = json.loads((tmp_path / "zarr" / "a" / "zarr.json").read_text())
    assert ours == theirs


@pytest.mark.skipif(not HAS_PCODEC, reason="needs pcodec")
@pytest.mark.parametrize(
    "dtype",
    ["uint16", "int16", "uint32", "int32", "uint64", "int64", "float16", "float32", "float64"],
)
@pytest.mark.parametrize(
    "config",
    [
        {},
        {"level": 0, "mode_spec": "classic", "delta_spec": "none"},
        {"level": 1, "delta_spec": "no_op"},
        {"level": 12, "delta_spec": "try_consecutive", "delta_encoding_order": 3},
        {"delta_spec": "try_lookback", "equal_pages_up_to": 50},
        {"delta_encoding_order": 1},
    ],
)
def test_live_pcodec(tmp_path: Path, quiet: None, dtype: str, config: dict[str, Any]) -> None:
    import numcodecs

    try:
        numcodecs.get_codec({"id": "pcodec", **config}).encode(np.arange(4, dtype=dtype))
    except (AttributeError, ValueError) as e:  # numcodecs 0.16 with pcodec 1.1: no "none"
        pytest.skip(f"this numcodecs and pcodec cannot encode with {config}: {e}")
    rng = np.random.default_rng(len(config))
    x = np.cumsum(rng.integers(0, 50, (20, 15)), axis=1).astype(dtype)
    serializer = {"name": "numcodecs.pcodec", "configuration": config}
    _both_ways(tmp_path, "a", x, chunks=(8, 15), serializer=serializer, compressors=None)


@pytest.mark.skipif(not HAS_ZFPY, reason="needs zfpy")
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize(
    ("config", "shape", "chunks"),
    [
        ({}, (30,), (16,)),
        ({"mode": 4, "tolerance": 0.05}, (9, 7), (4, 7)),
        ({"mode": 4, "tolerance": 0}, (9, 7), (9, 7)),
        ({"mode": 2, "rate": 6.5}, (5, 6, 7), (5, 3, 7)),
        ({"mode": 2, "rate": 1}, (20,), (20,)),
        ({"mode": 3, "precision": 9}, (3, 4, 5, 6), (3, 2, 5, 6)),
        ({"mode": 3, "precision": 0}, (40,), (40,)),
    ],
)
def test_live_zfpy(
    tmp_path: Path,
    quiet: None,
    dtype: str,
    config: dict[str, Any],
    shape: tuple[int, ...],
    chunks: tuple[int, ...],
) -> None:
    rng = np.random.default_rng(7)
    x = (rng.normal(0, 1000, shape)).astype(dtype)
    serializer = {"name": "numcodecs.zfpy", "configuration": config}
    header = {"float32": 9, "float64": 12}.get(dtype, 0)
    if config.get("mode") == 2 and 4 ** len(shape) * config["rate"] < header:
        # A fixed rate below a float block's header: the zfp library zfpy wraps gives the
        # block a wrapped-around budget and overruns its buffer (it can abort the process),
        # so zarrox refuses instead of calling it.
        a = zarrox.create_array(
            str(tmp_path),
            name="a",
            shape=shape,
            chunks=chunks,
            dtype=dtype,
            serializer=serializer,
            compressors=None,
        )
        with pytest.raises(UnsupportedError, match="below"):
            a[...] = x
        return
    _both_ways(tmp_path, "a", x, chunks=chunks, serializer=serializer, compressors=None)


# --------------------------------------------------------------------------------------------
# The metadata layer's checks
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "filters", "error", "message"),
    [
        ("float64", [_scale_offset(scale=0)], MetadataError, "zero"),
        ("float64", [_scale_offset(scale="-0.0")], MetadataError, "zero"),
        ("int8", [_scale_offset(offset=200)], MetadataError, "not a value of int8"),
        ("int8", [_scale_offset(offset=1.5)], MetadataError, "not a value of int8"),
        ("int8", [_scale_offset(offset="x")], MetadataError, "not a value of int8"),
        ("float32", [_scale_offset(offset="0x123")], MetadataError, "not a value"),
        (
            "float32",
            [{"name": "scale_offset", "configuration": {"shift": 1}}],
            MetadataError,
            "shift",
        ),
        ("bool", [_scale_offset()], MetadataError, "integer and floating-point"),
        ("complex64", [_cast("float32")], MetadataError, "integer and floating-point"),
        ("float32", [_cast("complex64")], MetadataError, "integer and floating-point"),
        ("float32", [_cast("float16", out_of_range="wrap")], MetadataError, "wrap"),
        ("float32", [_cast("int8", rounding="up")], MetadataError, "rounding"),
        ("float32", [_cast("int8", out_of_range="saturate")], MetadataError, "out_of_range"),
        ("float32", [{"name": "cast_value", "configuration": {}}], MetadataError, "data_type"),
        ("float32", [_cast("int8", scalar_map={"both": []})], MetadataError, "both"),
        (
            "float32",
            [_cast("int8", scalar_map={"encode": [[1.5, 300]]})],
            MetadataError,
            "not a value of int8",
        ),
        (
            "float32",
            [_cast("int8", scalar_map={"encode": [["0x7fc00000", 0]]})],
            MetadataError,
            "cannot cast",
        ),
        ("float32", [_cast("int8", scalar_map={"encode": 5})], MetadataError, "pairs"),
        ("float32", [_cast("float4")], UnsupportedError, "float4"),
        (
            "float32",
            [{"name": "bitround", "configuration": {"keepbits": -1}}],
            MetadataError,
            "keepbits",
        ),
        (
            "bool",
            [{"name": "bitround", "configuration": {"keepbits": 1}}],
            UnsupportedError,
            "bitround",
        ),
        (
            "int16",
            [{"name": "reshape", "configuration": {"shape": [3, -1]}}],
            MetadataError,
            "does not hold",
        ),
        (
            "int16",
            [{"name": "reshape", "configuration": {"shape": [-1, -1]}}],
            MetadataError,
            "at most once",
        ),
        (
            "int16",
            [{"name": "reshape", "configuration": {"shape": [[1], [0]]}}],
            MetadataError,
            "increase strictly",
        ),
        (
            "int16",
            [{"name": "reshape", "configuration": {"shape": [4, [0]]}}],
            MetadataError,
            r"codecs\[0\]\.configuration\.shape: output dimension 1 .* does not line up",
        ),
        (
            "int16",
            [{"name": "reshape", "configuration": {"shape": [[2]]}}],
            MetadataError,
            "2 is not an input dimension of a 2-dimensional chunk",
        ),
        (
            "int16",
            [{"name": "reshape", "configuration": {"shape": [True, -1]}}],
            MetadataError,
            "must be an integer or a list of input dimensions, got true",
        ),
    ],
)
def test_invalid_configurations(
    tmp_path: Path, dtype: str, filters: list[Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        zarrox.create_array(
            str(tmp_path), name="a", shape=(4, 4), chunks=(2, 4), dtype=dtype, filters=filters
        )


def test_extension_types_are_refused_by_cast_value_and_scale_offset(tmp_path: Path) -> None:
    pytest.importorskip("ml_dtypes")
    for filters in ([_cast("float32")], [_scale_offset()]):
        with pytest.raises(UnsupportedError, match="bfloat16"):
            zarrox.create_array(
                str(tmp_path),
                name="a",
                shape=(4,),
                dtype="bfloat16",
                filters=filters,
                overwrite=True,
            )
    with pytest.raises(UnsupportedError, match="bfloat16"):
        zarrox.create_array(
            str(tmp_path), name="b", shape=(4,), dtype="float32", filters=[_cast("bfloat16")]
        )


@pytest.mark.parametrize(
    ("index_codecs", "ok"),
    [
        (
            [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "numcodecs.crc32", "configuration": {}},
            ],
            True,
        ),
        (
            [
                {"name": "bytes", "configuration": {"endian": "big"}},
                {"name": "numcodecs.jenkins_lookup3", "configuration": {"initval": 3}},
            ],
            True,
        ),
        ([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}], False),
        (
            [
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "numcodecs.zlib", "configuration": {}},
            ],
            False,
        ),
        ([{"name": "numcodecs.pcodec", "configuration": {}}], False),
    ],
)
def test_index_codecs_must_have_a_fixed_size(
    tmp_path: Path, index_codecs: list[Any], ok: bool
) -> None:
    serializer = {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [2, 2],
            "codecs": [{"name": "bytes"}],
            "index_codecs": index_codecs,
        },
    }
    create = {
        "name": "a",
        "shape": (8, 8),
        "chunks": (4, 4),
        "dtype": "uint8",
        "serializer": serializer,
        "compressors": None,
    }
    if not ok:
        with pytest.raises(MetadataError, match="fixed size"):
            zarrox.create_array(str(tmp_path), **create)
        return
    a = zarrox.create_array(str(tmp_path), **create)
    x = np.arange(64, dtype="uint8").reshape(8, 8)
    a[...] = x
    assert_identical(zarrox.open_array(str(tmp_path), path="a")[...], x)
    assert_identical(zarrox.open_array(str(tmp_path), path="a")[1:3, 5], x[1:3, 5])


# --------------------------------------------------------------------------------------------
# The registry's bitround and reshape (zarr-python does not implement them)
# --------------------------------------------------------------------------------------------


def _bitround_ints(x: np.ndarray, keepbits: int) -> np.ndarray:
    """The registry bitround of integers, computed one element at a time in Python: round
    half to even to ``keepbits`` bits below the highest set bit of the two's complement
    pattern, saturating at all ones."""
    width = 8 * x.dtype.itemsize
    bits = x.view(f"u{x.dtype.itemsize}").astype(object)
    out = []
    for b in bits:
        maxbits = int(b).bit_length()
        if keepbits >= maxbits:
            out.append(b)
            continue
        mask_bits = maxbits - keepbits
        total = min(b + ((b >> mask_bits) & 1) + (1 << (mask_bits - 1)) - 1, 2**width - 1)
        out.append(total & ~((1 << mask_bits) - 1))
    return np.array(out, dtype=f"u{x.dtype.itemsize}").view(x.dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint64"])
@pytest.mark.parametrize("keepbits", [0, 1, 3, 7])
def test_bitround_integers(tmp_path: Path, dtype: str, keepbits: int) -> None:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(keepbits)
    x = rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    x[:4] = [info.max, info.min, 0, 1]
    a = zarrox.create_array(
        str(tmp_path),
        name="a",
        shape=x.shape,
        chunks=(16,),
        dtype=dtype,
        filters=[{"name": "bitround", "configuration": {"keepbits": keepbits}}],
    )
    a[...] = x
    assert_identical(zarrox.open_array(str(tmp_path), path="a")[...], _bitround_ints(x, keepbits))
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert doc["codecs"][0] == {"name": "bitround", "configuration": {"keepbits": keepbits}}


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex128"])
def test_bitround_floats_match_numcodecs(tmp_path: Path, dtype: str) -> None:
    from numcodecs import BitRound

    rng = np.random.default_rng(1)
    x = (rng.normal(0, 100, 50) * (1 + 1j if dtype.startswith("complex") else 1)).astype(dtype)
    keepbits = 5
    a = zarrox.create_array(
        str(tmp_path),
        name="a",
        shape=x.shape,
        dtype=dtype,
        filters=[{"name": "bitround", "configuration": {"keepbits": keepbits}}],
    )
    a[...] = x
    parts = x.view(x.real.dtype) if dtype.startswith("complex") else x
    expected = BitRound(keepbits).decode(BitRound(keepbits).encode(parts)).view(dtype)
    assert_identical(a[...], expected.reshape(x.shape))


def test_reshape_is_seen_by_later_codecs(tmp_path: Path) -> None:
    x = np.arange(4 * 6 * 2, dtype="int32").reshape(4, 6, 2)
    codecs = [
        {"name": "reshape", "configuration": {"shape": [[0, 1], 2]}},
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        {"name": "bytes", "configuration": {"endian": "big"}},
    ]
    a = zarrox.create_array(
        str(tmp_path),
        name="a",
        shape=x.shape,
        chunks=(2, 6, 2),
        dtype="int32",
        serializer=codecs[2],
        filters=codecs[:2],
        compressors=None,
    )
    a[...] = x
    # A chunk is the 12 x 2 matrix of its elements, transposed, big-endian.
    chunk = x[:2].reshape(12, 2).T.astype(">i4").tobytes()
    assert (tmp_path / "a" / "c" / "0" / "0" / "0").read_bytes() == chunk
    assert_identical(zarrox.open_array(str(tmp_path), path="a")[1:3, ::2, 1], x[1:3, ::2, 1])
    with pytest.raises(MetadataError, match="permutation"):
        zarrox.create_array(
            str(tmp_path),
            name="b",
            shape=x.shape,
            chunks=(2, 6, 2),
            dtype="int32",
            filters=[codecs[0], {"name": "transpose", "configuration": {"order": [2, 1, 0]}}],
        )


def test_reshape_before_sharding_shards_the_new_shape(tmp_path: Path) -> None:
    x = np.arange(8 * 8, dtype="uint8").reshape(8, 8)
    serializer = {
        "name": "sharding_indexed",
        "configuration": {"chunk_shape": [16], "codecs": [{"name": "bytes"}]},
    }
    a = zarrox.create_array(
        str(tmp_path),
        name="a",
        shape=x.shape,
        chunks=(8, 8),
        dtype="uint8",
        compressors=None,
        serializer=serializer,
        filters=[{"name": "reshape", "configuration": {"shape": [-1]}}],
    )
    a[...] = x
    assert_identical(zarrox.open_array(str(tmp_path), path="a")[...], x)
    with pytest.raises(MetadataError):
        zarrox.create_array(
            str(tmp_path),
            name="b",
            shape=x.shape,
            chunks=(8, 8),
            dtype="uint8",
            serializer=serializer,
            filters=[{"name": "reshape", "configuration": {"shape": [4, -1]}}],
        )
