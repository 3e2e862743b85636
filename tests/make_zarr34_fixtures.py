"""Make the fixtures under ``tests/fixtures/zarr34/`` (read by test_codecs_zarr34.py).

zarr-python 3.4 writes codecs that zarr-python 3.1 does not know: ``scale_offset`` and
``cast_value`` (its ``cast-value-rs`` backend casts), ``numcodecs.pcodec`` and
``numcodecs.zfpy`` as array->bytes codecs, fixed-size numcodecs checksums in a shard's
``index_codecs``, and shards whose inner chunks lie in Morton order. zarr-python 3.4 needs
Python >= 3.12, so the Python 3.11 test run checks zarrox against arrays it wrote, kept here:

- ``store/``: one Zarr v3 hierarchy, one array per case, written by zarr-python 3.4 with its
  own codec pipeline;
- ``input/<case>.npy``: the values written (the whole array at once);
- ``expected/<case>.npy``: what zarr-python reads back (lossy codecs differ from the input);
- ``manifest.json``: the versions that wrote them, and per case the ``create_array``
  arguments in JSON form, which zarrox's ``create_array`` takes as they are (zarrox must
  write the same ``zarr.json`` and, writing the input, the same chunk bytes).

Run it from the repository root with a Python 3.12+ environment holding zarr 3.4, numcodecs,
pcodec, zfpy and cast-value-rs::

    ~/.pyenv/versions/3.12.1/bin/python -m venv .venv312
    .venv312/bin/pip install "zarr==3.4.2" numcodecs pcodec "zfpy==1.0.1" cast-value-rs
    .venv312/bin/python tests/make_zarr34_fixtures.py
"""

from __future__ import annotations

import json
import shutil
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).resolve().parent / "fixtures" / "zarr34"

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
NAN_U8 = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}


def _so(**cfg: Any) -> dict[str, Any]:
    return {"name": "scale_offset", "configuration": cfg}


def _cast(data_type: str, **cfg: Any) -> dict[str, Any]:
    return {"name": "cast_value", "configuration": {"data_type": data_type, **cfg}}


def _pcodec(**cfg: Any) -> dict[str, Any]:
    return {"name": "numcodecs.pcodec", "configuration": cfg}


def _zfpy(**cfg: Any) -> dict[str, Any]:
    return {"name": "numcodecs.zfpy", "configuration": cfg}


def _shard(chunk_shape: list[int], index: list[Any], location: str = "end") -> dict[str, Any]:
    return {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": chunk_shape,
            "codecs": [LE, ZSTD],
            "index_codecs": index,
            "index_location": location,
        },
    }


def _checksum(name: str) -> dict[str, Any]:
    return {"name": f"numcodecs.{name}", "configuration": {}}


def _wave(shape: tuple[int, ...], dtype: str, scale: float = 100.0) -> np.ndarray:
    x = np.sin(np.arange(int(np.prod(shape))) * 0.37) * scale
    return x.reshape(shape).astype(dtype)


def _cases() -> dict[str, tuple[dict[str, Any], np.ndarray]]:
    """name -> (create_array arguments in JSON form, the values written)."""
    c: dict[str, tuple[dict[str, Any], np.ndarray]] = {}

    def case(name: str, values: np.ndarray, **create: Any) -> None:
        create.setdefault("shape", list(values.shape))
        create.setdefault("dtype", str(values.dtype))
        c[name] = (create, values)

    # scale_offset and cast_value
    x = np.linspace(0, 2540, 12)
    x[3] = np.nan
    case(
        "scale_offset_cast_nan",
        x,
        chunks=[5],
        fill_value="NaN",
        filters=[_so(offset=-10, scale=0.1), _cast("uint8", scalar_map=NAN_U8)],
    )
    case(
        "scale_offset_int32",
        (1000 + 3 * np.arange(12, dtype="int32") - 9).reshape(3, 4),
        chunks=[2, 3],
        fill_value=1000,
        filters=[_so(offset=1000, scale=3)],
        serializer=BE,
        compressors=None,
    )
    case(
        "scale_offset_float16_strings",
        np.array([0.5, 1, 1.5, 2.25, -3, 100, 0.1, 7], dtype="float16"),
        chunks=[3],
        filters=[_so(offset="0.5", scale="0x4000")],
        compressors=None,
    )
    case(
        "scale_offset_uint64",
        np.array([2**63, 2**63 + 5, 2**64 - 1, 2**63 + 2**62], dtype="uint64"),
        chunks=[4],
        fill_value=2**63,
        filters=[_so(offset=2**63)],
    )
    case(
        "scale_offset_float32_nan_scale",
        np.array([1, -2, np.inf, np.nan, 0], dtype="float32"),
        chunks=[2],
        filters=[_so(offset=1.5, scale="NaN")],
        compressors=None,
    )
    case(
        "cast_float32_int8_towards_zero_wrap",
        np.array([-2.7, -0.5, 0.5, 1.9, 127.9, 128.5, -300.2, 1000.1], dtype="float32"),
        chunks=[3],
        filters=[_cast("int8", rounding="towards-zero", out_of_range="wrap")],
    )
    case(
        "cast_float64_int16_nearest_away_clamp",
        np.array([[2.5, -2.5, 1e6, -1e6], [0.5, -0.5, 32767.5, 3.49]]),
        chunks=[1, 4],
        filters=[_cast("int16", rounding="nearest-away", out_of_range="clamp")],
    )
    case(
        "cast_int64_float16_towards_positive_clamp",
        np.array([1, 2049, 2051, 70000, -70000, -2049, 65519, 65520], dtype="int64"),
        chunks=[4],
        filters=[
            _cast(
                "float16",
                rounding="towards-positive",
                out_of_range="clamp",
                scalar_map={"decode": [["Infinity", 65504], ["-Infinity", -65504]]},
            )
        ],
    )
    case(
        "cast_float64_float32_towards_negative",
        np.array([0.1, -0.1, 1e300, np.nan, np.inf, -0.0, 3.0000001]),
        chunks=[7],
        filters=[_cast("float32", rounding="towards-negative", out_of_range="clamp")],
    )
    case(
        "cast_uint16_uint8_wrap_scalar_map",
        np.array([0, 1, 255, 256, 300, 65535, 511, 7], dtype="uint16"),
        chunks=[8],
        fill_value=7,
        filters=[
            _cast(
                "uint8",
                out_of_range="wrap",
                scalar_map={"encode": [[65535, 0], [7, 7]], "decode": [[0, 65535]]},
            )
        ],
    )
    case(
        "cast_int32_uint8_fill",
        np.array([[7, 8], [9, 255]], dtype="int32"),
        chunks=[2, 1],
        fill_value=7,
        filters=[_cast("uint8")],
        compressors=None,
    )
    case(
        "scale_offset_cast_sharded",
        _wave((8, 8), "float32", 10.0),
        chunks=[8, 8],
        serializer={
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": [4, 2],
                "codecs": [_so(offset=-20, scale=4), _cast("int16", out_of_range="clamp"), LE],
                "index_codecs": [LE, {"name": "crc32c"}],
                "index_location": "end",
            },
        },
        compressors=None,
    )

    # numcodecs.pcodec (an array->bytes codec)
    case(
        "pcodec_uint16",
        np.arange(300, dtype="uint16") * 7 % 1000,
        chunks=[128],
        serializer=_pcodec(),
        compressors=None,
    )
    case(
        "pcodec_int32_classic_level0",
        _wave((16, 20), "int32"),
        chunks=[8, 10],
        serializer=_pcodec(level=0, mode_spec="classic"),
        compressors=None,
    )
    case(
        "pcodec_uint64_try_consecutive",
        np.cumsum(np.arange(200, dtype="uint64")),
        chunks=[64],
        serializer=_pcodec(delta_spec="try_consecutive", delta_encoding_order=2),
        compressors=None,
    )
    case(
        "pcodec_float32_lookback",
        np.tile(_wave((25,), "float32"), 8),
        chunks=[200],
        serializer=_pcodec(delta_spec="try_lookback", level=12),
        compressors=None,
    )
    case(
        "pcodec_float64_pages_no_op",
        _wave((10, 10), "float64", 1e3),
        chunks=[10, 10],
        serializer=_pcodec(
            delta_spec="no_op", paging_spec="equal_pages_up_to", equal_pages_up_to=16
        ),
        compressors=[ZSTD],
    )
    case(
        "pcodec_float16_auto_order",
        _wave((50,), "float16"),
        chunks=[50],
        serializer=_pcodec(delta_encoding_order=1),
        compressors=None,
    )
    case(
        "pcodec_int64_fill",
        np.array([5, 5, 5, 5, 1, 2, 3, 4], dtype="int64"),
        chunks=[4],
        fill_value=5,
        serializer=_pcodec(level=3),
        compressors=None,
    )

    # numcodecs.zfpy (an array->bytes codec); modes: 2 rate, 3 precision, 4 accuracy
    case(
        "zfpy_float64_reversible",
        _wave((40,), "float64"),
        chunks=[16],
        serializer=_zfpy(),
        compressors=None,
    )
    case(
        "zfpy_float32_accuracy",
        _wave((12, 12), "float32"),
        chunks=[6, 12],
        serializer=_zfpy(mode=4, tolerance=0.01),
        compressors=None,
    )
    case(
        "zfpy_float64_rate",
        _wave((8, 8), "float64"),
        chunks=[8, 4],
        serializer=_zfpy(mode=2, rate=8),
        compressors=None,
    )
    case(
        "zfpy_float32_precision_3d",
        _wave((4, 6, 5), "float32"),
        chunks=[4, 6, 5],
        serializer=_zfpy(mode=3, precision=12),
        compressors=None,
    )
    case(
        "zfpy_int32_reversible_4d",
        _wave((2, 3, 4, 5), "int32"),
        chunks=[2, 3, 4, 5],
        serializer=_zfpy(mode=4, tolerance=-1),
        compressors=[ZSTD],
    )
    case(
        "zfpy_int64_rate",
        _wave((30,), "int64", 1e6),
        chunks=[30],
        serializer=_zfpy(mode=2, rate=16),
        compressors=None,
    )

    # fixed-size checksums as shard index codecs; inner chunks in Morton order
    grid = np.arange(12 * 8, dtype="uint16").reshape(12, 8)
    grid[0:2, 2:4] = 0  # an empty inner chunk
    for name, index, location in (
        ("crc32", [LE, _checksum("crc32")], "end"),
        ("adler32", [LE, _checksum("adler32")], "start"),
        ("fletcher32", [LE, _checksum("fletcher32")], "end"),
        ("jenkins_lookup3", [LE, _checksum("jenkins_lookup3")], "start"),
        ("crc32c", [BE, _checksum("crc32c")], "end"),
        ("crc32_after_crc32c", [LE, {"name": "crc32c"}, _checksum("crc32")], "end"),
    ):
        case(
            f"sharding_index_{name}",
            grid,
            chunks=[6, 8],
            serializer=_shard([2, 2], index, location),
            compressors=None,
        )
    case(
        "sharding_morton_default_index",
        _wave((16, 16), "int16"),
        chunks=[16, 16],
        serializer=_shard([2, 2], [LE, {"name": "crc32c"}]),
        compressors=None,
    )
    case(
        "sharding_morton_3d",
        _wave((6, 4, 6), "float32"),
        chunks=[6, 4, 6],
        serializer=_shard([2, 2, 3], [LE, {"name": "crc32c"}], "start"),
        compressors=None,
    )
    return c


def python_kwargs(create: dict[str, Any]) -> dict[str, Any]:
    """A case's JSON ``create_array`` arguments as Python values (the fill value)."""
    kwargs = dict(create)
    fill = kwargs.get("fill_value")
    if fill in ("NaN", "Infinity", "-Infinity"):
        kwargs["fill_value"] = float(fill.replace("Infinity", "inf"))
    return kwargs


def main() -> None:
    import zarr

    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "input").mkdir(parents=True)
    (OUT / "expected").mkdir()
    root = zarr.open_group(str(OUT / "store"), mode="w")
    manifest: dict[str, Any] = {
        "versions": {
            p: version(p) for p in ("zarr", "numcodecs", "pcodec", "zfpy", "cast-value-rs")
        },
        "arrays": {},
    }
    for name, (create, values) in _cases().items():
        a = root.create_array(name, **python_kwargs(create))
        a[...] = values
        back = a[...]
        np.save(OUT / "input" / f"{name}.npy", values)
        np.save(OUT / "expected" / f"{name}.npy", back)
        manifest["arrays"][name] = create
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(f.stat().st_size for f in OUT.rglob("*") if f.is_file())
    print(f"wrote {len(manifest['arrays'])} arrays, {total} bytes, to {OUT}")


if __name__ == "__main__":
    main()
