"""Shared helpers and fixtures of the interop suites (zarr-python, tensorstore), and the
fixtures that start servers on 127.0.0.1 for the store tests (S3 on moto, static HTTP with and
without Range, the fault-injecting proxy; see ``servers.py``).

The helpers are plain functions, imported by the test modules with ``from conftest import ...``
(pytest puts ``tests/`` on ``sys.path``); the codec chains and data types here are the
parametrization tables both interop suites share.
"""

from __future__ import annotations

import math
import re
import uuid
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import servers
import zarrox


def _zarr_version() -> tuple[int, int]:
    try:
        from importlib.metadata import version

        major, minor = version("zarr").split(".")[:2]
        return int(major), int(minor)
    except Exception:  # zarr-python not installed
        return (0, 0)


#: (major, minor) of the installed zarr-python: 3.1 on Python 3.11, 3.4 on 3.12 and later.
#: Tests that compare with zarr-python's own output use it where 3.2-3.4 changed that output.
ZARR_VERSION: tuple[int, int] = _zarr_version()

# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

#: The 14 named Zarr v3 core data types.
DTYPES: tuple[str, ...] = (
    "bool",
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
    "complex64",
    "complex128",
)

Codec = dict[str, Any]


def bytes_codec(endian: str | None = "little") -> Codec:
    if endian is None:
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": endian}}


def transpose(order: Sequence[int]) -> Codec:
    return {"name": "transpose", "configuration": {"order": list(order)}}


def gzip(level: int) -> Codec:
    return {"name": "gzip", "configuration": {"level": level}}


def zstd(level: int, checksum: bool = False) -> Codec:
    return {"name": "zstd", "configuration": {"level": level, "checksum": checksum}}


def blosc(cname: str, shuffle: str, typesize: int, clevel: int = 5, blocksize: int = 0) -> Codec:
    return {
        "name": "blosc",
        "configuration": {
            "typesize": typesize,
            "cname": cname,
            "clevel": clevel,
            "shuffle": shuffle,
            "blocksize": blocksize,
        },
    }


CRC32C: Codec = {"name": "crc32c"}

BLOSC_CNAMES: tuple[str, ...] = ("lz4", "lz4hc", "blosclz", "zstd", "zlib")
BLOSC_SHUFFLES: tuple[str, ...] = ("noshuffle", "shuffle", "bitshuffle")


class CodecCase:
    """An array layout with a codec chain: what a codec-matrix test creates."""

    def __init__(
        self,
        dtype: str,
        shape: tuple[int, ...],
        chunks: tuple[int, ...],
        codecs: list[Codec],
        fill_value: Any = 0,
    ) -> None:
        self.dtype = dtype
        self.shape = shape
        self.chunks = chunks
        self.codecs = codecs
        self.fill_value = fill_value

    def __repr__(self) -> str:
        return f"CodecCase({self.dtype}, {self.shape}/{self.chunks}, {self.codecs})"


# Every shape leaves an edge chunk in every dimension.
_S2, _C2 = (13, 11), (4, 5)
_S3, _C3 = (7, 9, 5), (3, 4, 2)

CODEC_CASES: dict[str, CodecCase] = {
    "bytes-little-int32": CodecCase("int32", _S2, _C2, [bytes_codec("little")]),
    "bytes-big-int32": CodecCase("int32", _S2, _C2, [bytes_codec("big")]),
    "bytes-big-uint16": CodecCase("uint16", _S2, _C2, [bytes_codec("big")], fill_value=7),
    "bytes-big-float64": CodecCase("float64", _S3, _C3, [bytes_codec("big")], np.nan),
    "bytes-big-complex64": CodecCase("complex64", _S2, _C2, [bytes_codec("big")]),
    "bytes-none-uint8": CodecCase("uint8", _S2, _C2, [bytes_codec(None)]),
    "transpose-2d-float32": CodecCase("float32", _S2, _C2, [transpose([1, 0]), bytes_codec()]),
    "transpose-2d-identity": CodecCase("int64", _S2, _C2, [transpose([0, 1]), bytes_codec()]),
    "transpose-3d-201-big-int16": CodecCase(
        "int16", _S3, _C3, [transpose([2, 0, 1]), bytes_codec("big")]
    ),
    "transpose-3d-120-float64": CodecCase(
        "float64", _S3, _C3, [transpose([1, 2, 0]), bytes_codec("little")]
    ),
    "transpose-3d-210-uint8": CodecCase("uint8", _S3, _C3, [transpose([2, 1, 0]), bytes_codec()]),
    "transpose-twice-3d": CodecCase(
        "int32", _S3, _C3, [transpose([1, 0, 2]), transpose([2, 0, 1]), bytes_codec()]
    ),
    **{
        f"gzip-{lvl}": CodecCase("float32", _S2, _C2, [bytes_codec(), gzip(lvl)])
        for lvl in (0, 1, 5, 9)
    },
    **{
        f"zstd-{lvl}-checksum-{ck}": CodecCase("int16", _S2, _C2, [bytes_codec(), zstd(lvl, ck)])
        for lvl in (-1, 0, 3, 19)
        for ck in (False, True)
    },
    **{
        f"blosc-{cname}-{shuffle}": CodecCase(
            "float32", _S2, _C2, [bytes_codec(), blosc(cname, shuffle, 4)]
        )
        for cname in BLOSC_CNAMES
        for shuffle in BLOSC_SHUFFLES
    },
    "blosc-typesize1-int32": CodecCase(
        "int32", _S2, _C2, [bytes_codec(), blosc("lz4", "shuffle", 1)]
    ),
    "blosc-typesize8-uint16": CodecCase(
        "uint16", _S2, _C2, [bytes_codec(), blosc("zstd", "bitshuffle", 8)]
    ),
    "blosc-clevel0": CodecCase(
        "int64", _S2, _C2, [bytes_codec(), blosc("blosclz", "shuffle", 8, 0)]
    ),
    "blosc-clevel9-blocksize": CodecCase(
        "float64", _S2, _C2, [bytes_codec(), blosc("zstd", "shuffle", 8, 9, 256)]
    ),
    "blosc-uint8-bitshuffle": CodecCase(
        "uint8", _S2, _C2, [bytes_codec(None), blosc("lz4", "bitshuffle", 1)]
    ),
    "crc32c": CodecCase("uint32", _S2, _C2, [bytes_codec(), CRC32C]),
    "crc32c-big": CodecCase("float64", _S2, _C2, [bytes_codec("big"), CRC32C]),
    "transpose-big-blosc-crc32c-3d": CodecCase(
        "int32",
        _S3,
        _C3,
        [transpose([2, 0, 1]), bytes_codec("big"), blosc("lz4", "bitshuffle", 4), CRC32C],
        fill_value=-3,
    ),
    "transpose-big-blosc-crc32c-2d": CodecCase(
        "float64",
        _S2,
        _C2,
        [transpose([1, 0]), bytes_codec("big"), blosc("zstd", "shuffle", 8), CRC32C],
        fill_value=np.nan,
    ),
    "transpose-big-zstd-checksum-crc32c": CodecCase(
        "complex128", _S3, _C3, [transpose([1, 2, 0]), bytes_codec("big"), zstd(3, True), CRC32C]
    ),
    "crc32c-then-gzip": CodecCase("int16", _S2, _C2, [bytes_codec(), CRC32C, gzip(6)]),
    "zstd-then-gzip": CodecCase("uint64", _S2, _C2, [bytes_codec("big"), zstd(1), gzip(1)]),
    "chunks-larger-than-shape": CodecCase(
        "float32", (5, 3), (8, 8), [transpose([1, 0]), bytes_codec("big"), gzip(3)]
    ),
    "1d-blosc-bitshuffle-big": CodecCase(
        "int64", (100,), (7,), [bytes_codec("big"), blosc("blosclz", "bitshuffle", 8)]
    ),
    "4d-transpose-crc32c": CodecCase(
        "uint16", (3, 4, 5, 6), (2, 3, 2, 4), [transpose([3, 1, 0, 2]), bytes_codec(), CRC32C]
    ),
    "blosc-then-crc32c-then-zstd": CodecCase(
        "float16", _S3, _C3, [bytes_codec(), blosc("lz4hc", "shuffle", 2), CRC32C, zstd(2)]
    ),
}

#: The four chunk key encodings: (json, key of chunk (i, j) as a path relative to the array).
CHUNK_KEY_ENCODINGS: dict[str, dict[str, Any]] = {
    "default-slash": {"name": "default", "configuration": {"separator": "/"}},
    "default-dot": {"name": "default", "configuration": {"separator": "."}},
    "v2-dot": {"name": "v2", "configuration": {"separator": "."}},
    "v2-slash": {"name": "v2", "configuration": {"separator": "/"}},
}


def chunk_key(encoding: dict[str, Any], coords: Sequence[int]) -> str:
    """The store key of chunk ``coords`` under ``encoding``, computed from the spec."""
    sep = encoding.get("configuration", {}).get("separator", "/")
    if encoding["name"] == "v2":
        return sep.join(str(c) for c in coords) if coords else "0"
    return "c" + "".join(f"{sep}{c}" for c in coords)


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def make_data(dtype: str | np.dtype[Any], shape: Sequence[int], seed: int = 0) -> np.ndarray:
    """Deterministic data of ``dtype``: integers over the whole range, floats with NaN,
    infinities, -0.0 and subnormals sprinkled in, complex numbers with special parts."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    shape = tuple(shape)
    n = math.prod(shape)
    if dt.kind == "b":
        return (rng.random(n) < 0.5).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True).reshape(shape)
    if dt.kind == "f":
        flat = (rng.standard_normal(n) * 1000).astype(dt)
        specials = np.array(
            [np.nan, np.inf, -np.inf, -0.0, np.finfo(dt).smallest_subnormal, np.finfo(dt).max],
            dtype=dt,
        )
        # NaNs other than the canonical one: negative, and with a payload.
        canonical = int(specials[:1].view(f"u{dt.itemsize}")[0])
        sign = 1 << (8 * dt.itemsize - 1)
        odd_nans = np.array([canonical | sign, canonical | 1], dtype=f"u{dt.itemsize}")
        specials = np.concatenate([specials, odd_nans.view(dt)])
        if n >= 2 * len(specials):
            pos = rng.choice(n, size=len(specials), replace=False)
            flat[pos] = specials
        return flat.reshape(shape)
    if dt.kind == "c":
        part = np.dtype(f"f{dt.itemsize // 2}")
        re_ = make_data(part, (n,), seed + 1)
        im_ = make_data(part, (n,), seed + 2)
        out = np.empty(n, dtype=dt)
        out.real = re_
        out.imag = im_
        return out.reshape(shape)
    raise TypeError(f"no data generator for {dt}")


def full(shape: Sequence[int], dtype: str | np.dtype[Any], fill_value: Any) -> np.ndarray:
    """An array of the fill value (``fill_value`` None: zero / false)."""
    dt = np.dtype(dtype)
    if fill_value is None:
        return np.zeros(tuple(shape), dtype=dt)
    return np.full(tuple(shape), fill_value, dtype=dt)


def fill_to_json(value: Any, dtype: str) -> Any:
    """A fill value as the spec's JSON form (what tensorstore's metadata wants); a NaN other
    than the canonical one is written as its hex bits."""
    dt = np.dtype(dtype)

    def one_float(x: Any) -> Any:
        part = np.dtype(f"f{dt.itemsize // 2}") if dt.kind == "c" else dt
        bits = int(np.asarray(x, dtype=part).view(f"u{part.itemsize}"))
        canonical = int(np.asarray(np.nan, dtype=part).view(f"u{part.itemsize}"))
        if math.isnan(x) and bits != canonical:
            return f"0x{bits:0{2 * part.itemsize}x}"
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return float(x)

    if value is None:
        value = np.zeros((), dtype=dt)[()]
    if dt.kind == "b":
        return bool(value)
    if dt.kind in "iu":
        return int(value)
    if dt.kind == "f":
        return one_float(np.asarray(value, dtype=dt)[()])
    if dt.kind == "c":
        c = np.asarray(value, dtype=dt)[()]
        return [one_float(c.real), one_float(c.imag)]
    raise TypeError(f"no JSON fill value for {dt}")


def assert_identical(actual: Any, expected: np.ndarray, what: str = "") -> None:
    """Same shape, same data type (byte order aside), same values (NaN where NaN) and the
    very same bits (NaN payloads, -0.0)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype.newbyteorder("=") == expected.dtype.newbyteorder("="), (
        f"{what}: dtype {actual.dtype} != {expected.dtype}"
    )
    native = expected.dtype.newbyteorder("=")
    a = np.ascontiguousarray(actual.astype(native))
    e = np.ascontiguousarray(expected.astype(native))
    np.testing.assert_array_equal(a, e, err_msg=what, strict=True)
    assert a.tobytes() == e.tobytes(), f"{what}: values are equal but their bits differ"


def chunk_files(array_dir: Path) -> set[str]:
    """Paths (relative, "/"-separated) of every file below ``array_dir`` except metadata."""
    return {
        p.relative_to(array_dir).as_posix()
        for p in array_dir.rglob("*")
        if p.is_file() and p.name != "zarr.json"
    }


def chunks_touched(
    shape: Sequence[int], chunks: Sequence[int], region: Sequence[slice]
) -> set[tuple[int, ...]]:
    """Grid indices of the chunks that the (step 1) ``region`` intersects."""
    ranges = []
    for s, c, sl in zip(shape, chunks, region, strict=True):
        start, stop, _ = sl.indices(s)
        ranges.append(range(start // c, (stop - 1) // c + 1) if stop > start else range(0))
    out: set[tuple[int, ...]] = {()}
    for r in ranges:
        out = {t + (i,) for t in out for i in r}
    return out


def _equals_fill(values: np.ndarray, fill: np.ndarray) -> np.ndarray:
    """Element-wise "is the fill value", NaN equal to NaN (each part of a complex)."""
    if values.dtype.kind == "c":
        return _equals_fill(values.real, fill.real) & _equals_fill(values.imag, fill.imag)
    same = values == fill
    if values.dtype.kind == "f":
        same |= np.isnan(values) & np.isnan(fill)
    return same


def nonfill_chunks(
    values: np.ndarray, chunks: Sequence[int], fill_value: Any
) -> set[tuple[int, ...]]:
    """Grid indices of the chunks of ``values`` holding anything but the fill value: the
    chunks an implementation that skips empty chunks stores."""
    fill = np.asarray(full((), values.dtype, fill_value))
    grid = [-(-s // c) for s, c in zip(values.shape, chunks, strict=True)]
    out = set()
    for idx in np.ndindex(*grid):
        region = tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, chunks, strict=True))
        if not _equals_fill(values[region], fill).all():
            out.add(tuple(int(i) for i in idx))
    return out


# --------------------------------------------------------------------------------------------
# Shared test tables and write sequences
# --------------------------------------------------------------------------------------------


def dtype_chain(dtype: str, kind: str) -> list[Codec]:
    itemsize = np.dtype(dtype).itemsize
    if kind == "zstd":
        return [bytes_codec("little"), zstd(0)]
    return [transpose([1, 0]), bytes_codec("big"), blosc("lz4", "shuffle", itemsize), CRC32C]


DTYPE_FILLS: dict[str, Any] = {
    "b": True,
    "i": 42,
    "u": 42,
    "f": -1.5,
    "c": complex(1.0, -2.0),
}


FILL_CASES: dict[str, tuple[str, Any]] = {
    **{
        f"{dt}-{name}": (dt, value)
        for dt in ("float16", "float32", "float64")
        for name, value in (("nan", np.nan), ("-inf", -np.inf), ("inf", np.inf))
    },
    "int16--7": ("int16", -7),
    "int64-min": ("int64", np.iinfo("int64").min),
    "uint64-max": ("uint64", np.iinfo("uint64").max),
    "uint8-255": ("uint8", 255),
    "bool-true": ("bool", True),
    "complex64-finite": ("complex64", complex(1.5, -2.5)),
    "complex128-nan-inf": ("complex128", complex(np.nan, np.inf)),
    "complex128-neg-inf-nan": ("complex128", complex(-np.inf, np.nan)),
    "float64--0.0": ("float64", -0.0),
    "float32-1e-40": ("float32", 1e-40),
}

#: NaN fill values other than "NaN": they are stored as hex bits ("0x7fc00001").
ODD_NAN_FILLS: dict[str, tuple[str, Any]] = {
    "float32-payload": ("float32", np.array(0x7FC00001, dtype="u4").view("f4")[()]),
    "float64-negative": ("float64", np.array(0xFFF8000000000000, dtype="u8").view("f8")[()]),
    "float16-payload": ("float16", np.array(0x7E01, dtype="u2").view("f2")[()]),
}


def partial_writes(arr: Any, model: np.ndarray, seed: int) -> None:
    """The same sequence of partial-chunk writes on ``arr`` and on the numpy ``model``
    (2-D shapes of at least (13, 11), 3-D of at least (7, 9, 5); no negative indices, which
    tensorstore does not wrap)."""
    rng_data = make_data(model.dtype, model.shape, seed=seed)
    if model.ndim == 2:
        sels: list[Any] = [
            (slice(1, 6), slice(2, 9)),
            (model.shape[0] - 1, slice(None)),
            (slice(None, None, 3), slice(1, None, 4)),
            (5, 7),
            (slice(3, 4), slice(0, 1)),
        ]
        oidx: tuple[Any, ...] = ([0, 12, 4], [10, 0])
    else:
        sels = [
            (slice(1, 5), slice(2, 7), slice(1, 4)),
            (model.shape[0] - 1,),
            (slice(None, None, 2), slice(1, None, 3), slice(None, None, 4)),
            (3, 4, 2),
            (slice(None), 8, slice(None)),
        ]
        oidx = ([0, 6], [8, 1], [4])
    for sel in sels:
        value = rng_data[sel]
        arr[sel] = value
        model[sel] = value
    value = make_data(model.dtype, tuple(len(i) for i in oidx), seed=seed + 1)
    arr.oindex[oidx] = value
    model[np.ix_(*[np.asarray(i) for i in oidx])] = value


PARTIAL_CASES = [
    "bytes-little-int32",
    "bytes-big-float64",
    "transpose-big-blosc-crc32c-3d",
    "transpose-big-blosc-crc32c-2d",
    "gzip-1",
    "transpose-big-zstd-checksum-crc32c",
]


ZERO_D_CASES: dict[str, tuple[str, Any, Any]] = {
    "float64": ("float64", np.nan, -0.0),
    "int32": ("int32", 5, -123456),
    "complex128": ("complex128", complex(0, np.inf), complex(1.5, np.nan)),
    "bool": ("bool", False, True),
    "uint16-big": ("uint16", 1, 65535),
}


class RandomCase:
    """A random (seeded) array layout, codec chain and fill value."""

    def __init__(self, seed: int, *, dtypes: Sequence[str] = DTYPES) -> None:
        rng = np.random.default_rng(1000 + seed)
        self.rng = rng
        ndim = int(rng.integers(1, 5))
        self.shape = tuple(int(rng.integers(1, 13 if ndim < 4 else 7)) for _ in range(ndim))
        self.chunks = tuple(int(rng.integers(1, s + 3)) for s in self.shape)
        self.dtype = str(rng.choice(list(dtypes)))
        itemsize = np.dtype(self.dtype).itemsize
        codecs: list[Codec] = []
        if rng.random() < 0.5:
            codecs.append(transpose([int(i) for i in rng.permutation(ndim)]))
        codecs.append(bytes_codec(str(rng.choice(["little", "big"]))))
        pool: list[Codec] = [
            gzip(int(rng.integers(0, 10))),
            zstd(int(rng.integers(-3, 10)), bool(rng.random() < 0.5)),
            blosc(
                str(rng.choice(BLOSC_CNAMES)),
                str(rng.choice(BLOSC_SHUFFLES)),
                int(rng.choice([1, itemsize, 2 * itemsize])),
                int(rng.integers(0, 10)),
            ),
            CRC32C,
        ]
        for i in rng.permutation(len(pool))[: int(rng.integers(0, 3))]:
            codecs.append(pool[int(i)])
        self.codecs = codecs
        fill = make_data(self.dtype, (16,), seed=seed)[int(rng.integers(0, 16))]
        # A finite, non-zero fill: zarr-python compares chunks with the fill value by ==
        # with NaN equal to NaN (any part of a complex), so it would drop a small chunk of
        # -0.0 (fill 0.0) or of (1+NaNj) (fill 2+NaNj) and read the fill instead. Those are
        # zarr-python's choices, not zarrox's; NaN fills are covered by FILL_CASES.
        if fill.dtype.kind in "fc" and (not np.isfinite(fill) or fill == 0):
            fill = fill.dtype.type(1.5)
        self.fill_value = fill

    def __repr__(self) -> str:
        return (
            f"RandomCase({self.dtype}, {self.shape}/{self.chunks}, fill={self.fill_value!r}, "
            f"{self.codecs})"
        )

    def basic_selection(self) -> tuple[Any, ...]:
        """Integers and slices (step >= 1, non-negative bounds) in every dimension."""
        rng = self.rng
        out: list[Any] = []
        for n in self.shape:
            if rng.random() < 0.2:
                out.append(int(rng.integers(0, n)))
            else:
                start = int(rng.integers(0, n))
                stop = int(rng.integers(start + 1, n + 1))
                out.append(slice(start, stop, int(rng.choice([1, 1, 2, 3]))))
        return tuple(out)

    def orthogonal_selection(self) -> tuple[Any, ...]:
        """Sorted unique integer arrays, slices or integers in each dimension."""
        rng = self.rng
        out: list[Any] = []
        for n in self.shape:
            r = rng.random()
            if r < 0.5:
                k = int(rng.integers(1, n + 1))
                out.append(np.sort(rng.choice(n, size=k, replace=False)).astype(np.int64))
            elif r < 0.8:
                out.append(slice(int(rng.integers(0, n)), n))
            else:
                out.append(int(rng.integers(0, n)))
        return tuple(out)


def _orthogonal_axes(shape: Sequence[int], selection: tuple[Any, ...]) -> list[np.ndarray]:
    axes: list[np.ndarray] = []
    for n, sel in zip(shape, selection, strict=True):
        if isinstance(sel, slice):
            axes.append(np.arange(n)[sel])
        elif isinstance(sel, np.ndarray):
            axes.append(sel)
        else:
            axes.append(np.array([sel]))
    return axes


def _result_shape(axes: list[np.ndarray], selection: tuple[Any, ...]) -> tuple[int, ...]:
    return tuple(
        len(a)
        for a, sel in zip(axes, selection, strict=True)
        if isinstance(sel, slice | np.ndarray)
    )


def orthogonal_get(model: np.ndarray, selection: tuple[Any, ...]) -> np.ndarray:
    """``model`` indexed orthogonally (zarr's ``oindex``), integer dimensions dropped."""
    axes = _orthogonal_axes(model.shape, selection)
    return model[np.ix_(*axes)].reshape(_result_shape(axes, selection))


def orthogonal_set(model: np.ndarray, selection: tuple[Any, ...], value: np.ndarray) -> None:
    """``model.oindex[selection] = value`` for a numpy array."""
    axes = _orthogonal_axes(model.shape, selection)
    model[np.ix_(*axes)] = np.asarray(value).reshape([len(a) for a in axes])


# --------------------------------------------------------------------------------------------
# zarr-python / zarrox adapters
# --------------------------------------------------------------------------------------------


def split_codecs(codecs: Sequence[Codec]) -> dict[str, Any]:
    """A v3 codec chain -> zarr-python's ``filters``/``serializer``/``compressors``."""
    filters = [c for c in codecs if c["name"] == "transpose"]
    serializer = next(c for c in codecs if c["name"] == "bytes")
    compressors = [c for c in codecs if c["name"] not in ("transpose", "bytes")]
    return {"filters": filters, "serializer": serializer, "compressors": compressors}


def zarr_create(root: Path, name: str, **kwargs: Any) -> Any:
    """zarr-python's ``create_array`` on a local directory; ``codecs=`` is split for it."""
    import zarr

    codecs = kwargs.pop("codecs", None)
    if codecs is not None:
        kwargs.update(split_codecs(codecs))
    return zarr.create_array(store=str(root), name=name, **kwargs)


def zarr_read(root: Path, name: str) -> np.ndarray:
    import zarr

    return np.asarray(zarr.open_array(str(root), path=name, mode="r")[...])


def zarrox_create(root: Path, name: str, **kwargs: Any) -> Any:
    return zarrox.create_array(str(root), name=name, **kwargs)


def zarrox_read(root: Path, name: str) -> np.ndarray:
    return np.asarray(zarrox.open_array(str(root), path=name, mode="r")[...])


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _quiet_warnings(request: pytest.FixtureRequest) -> Iterator[None]:
    """zarr-python warns about unstable specifications and the like: not under test in the
    interop suites (other test modules keep their warnings)."""
    if not request.module.__name__.startswith("test_interop"):
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A fresh directory to be the store of one test."""
    path = tmp_path / "store.zarr"
    path.mkdir()
    return path


# --------------------------------------------------------------------------------------------
# Servers on 127.0.0.1 (tests/servers.py): S3 on moto, static HTTP, the fault proxy
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HttpSite:
    """A fresh directory served over HTTP: write a store into ``dir``, read it at ``url``."""

    dir: Path
    url: str

    def at(self, url: str) -> HttpSite:
        """The same directory reached through another server (the no-Range one, a proxy)."""
        return HttpSite(self.dir, url.rstrip("/") + "/" + self.dir.name)


@pytest.fixture(scope="session")
def _aws_isolation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No AWS client in this session looks at instance metadata or the user's AWS files."""
    with pytest.MonkeyPatch.context() as mp:
        for key, value in servers.isolated_aws_env(tmp_path_factory.mktemp("aws-home")).items():
            mp.setenv(key, value)
        yield


@pytest.fixture(scope="session")
def moto_server(_aws_isolation: None) -> Iterator[servers.ServerProcess]:
    """moto's S3 server (in memory) on 127.0.0.1, for the whole session."""
    pytest.importorskip("moto.server", reason="moto[server] is not installed")
    with servers.start_moto() as server:
        yield server


@pytest.fixture
def s3_bucket(moto_server: servers.ServerProcess) -> servers.S3Bucket:
    """A fresh, empty bucket on moto, reached directly."""
    return servers.S3Bucket.create(moto_server.url)


@pytest.fixture(scope="session")
def _s3_proxy(moto_server: servers.ServerProcess) -> Iterator[servers.FaultProxy]:
    with servers.FaultProxy(moto_server.port) as proxy:
        yield proxy


def _cleared(proxy: servers.FaultProxy) -> Iterator[servers.FaultProxy]:
    """``proxy`` with no faults and an empty log for one test, its faults cleared after."""
    proxy.clear()
    proxy.log(reset=True)
    yield proxy
    proxy.clear()


@pytest.fixture
def s3_proxy(_s3_proxy: servers.FaultProxy) -> Iterator[servers.FaultProxy]:
    """The fault proxy in front of moto (no faults until the test configures some; cleared
    after it)."""
    yield from _cleared(_s3_proxy)


@pytest.fixture
def proxied_bucket(s3_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy) -> servers.S3Bucket:
    """``s3_bucket`` reached through ``s3_proxy``."""
    return s3_bucket.via(s3_proxy.url)


@pytest.fixture(scope="session")
def http_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("http-root")


@pytest.fixture(scope="session")
def http_server(http_root: Path, _aws_isolation: None) -> Iterator[servers.ServerProcess]:
    """A static file server with Range support for the session's HTTP root directory."""
    pytest.importorskip("aiohttp")
    with servers.start_http(http_root) as server:
        yield server


@pytest.fixture(scope="session")
def http_norange_server(http_root: Path) -> Iterator[servers.ServerProcess]:
    """A static file server for the same directory that ignores Range (200, whole body)."""
    pytest.importorskip("aiohttp")
    with servers.start_http(http_root, ranges=False) as server:
        yield server


@pytest.fixture(scope="session")
def _http_proxy(http_server: servers.ServerProcess) -> Iterator[servers.FaultProxy]:
    with servers.FaultProxy(http_server.port) as proxy:
        yield proxy


@pytest.fixture
def http_proxy(_http_proxy: servers.FaultProxy) -> Iterator[servers.FaultProxy]:
    """The fault proxy in front of ``http_server`` (cleared before and after the test)."""
    yield from _cleared(_http_proxy)


@pytest.fixture
def http_site(
    http_root: Path, http_server: servers.ServerProcess, request: pytest.FixtureRequest
) -> HttpSite:
    """A fresh directory under the HTTP root and its URL on ``http_server``."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:80] + f"-{uuid.uuid4().hex[:8]}"
    path = http_root / name
    path.mkdir()
    return HttpSite(path, f"{http_server.url}/{name}")


def shard_inner_chunks(data: bytes) -> list[bytes | None]:
    """The inner chunks' bytes of a shard whose index (bytes + crc32c) is at its end, in index
    (C) order, None where absent. zarr-python 3.x lays inner chunks out in Morton order,
    zarrox in C order: both are valid, the index says where each chunk is."""
    absent = 2**64 - 1
    for k in range(1, (len(data) - 4) // 16 + 1):
        body = len(data) - 16 * k - 4
        pairs = np.frombuffer(data[body : len(data) - 4], dtype="<u8").reshape(-1, 2)
        ends = [int(o + n) for o, n in pairs if o != absent]
        if ends and max(ends) == body:
            return [None if o == absent else data[int(o) : int(o + n)] for o, n in pairs]
    raise AssertionError("no shard index found at the end of the shard")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip, with their reason, the comparisons with zarr-python whose behaviour zarr-python
    3.2-3.4 changed: where zarrox's own API keeps 3.1's (a module's ``ZARR_32_CHANGES``: test
    id -> reason) when the installed zarr-python is 3.2 or later, and where it follows 3.4's
    (``ZARR_34_ADOPTED``) when it is older than 3.4."""
    for item in items:
        changes = getattr(item.module, "ZARR_32_CHANGES", None)
        if ZARR_VERSION >= (3, 2) and changes and item.name in changes:
            item.add_marker(
                pytest.mark.skip(reason=f"zarr-python >= 3.2 changed this: {changes[item.name]}")
            )
        adopted = getattr(item.module, "ZARR_34_ADOPTED", None)
        if ZARR_VERSION < (3, 4) and adopted and item.name in adopted:
            reason = f"zarrox follows zarr-python 3.4 here: {adopted[item.name]}"
            item.add_marker(pytest.mark.skip(reason=reason))
