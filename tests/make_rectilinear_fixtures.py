"""Make the rectilinear chunk grid fixtures under ``tests/fixtures/rectilinear/`` (read by
test_rectilinear.py), written by zarr-python 3.4.2 (run it on Python >= 3.12 with
``pip install zarr==3.4.2``; rectilinear grids are behind zarr's ``array.rectilinear_chunks``
flag).

``store/`` is a local store of a group with one array per case; ``expected/<name>.npy`` the
values each reads as (built here in numpy, independently of any reader, and checked against
zarr's own read-back); ``expected.json`` per array the ``create_array`` arguments, the
written ``zarr.json`` and what zarr-python answers for ``cdata_shape``, ``nchunks``,
``read_chunk_sizes``, ``write_chunk_sizes``, ``chunks`` and ``shards`` (``null`` where zarr
raises), so that the tests can rebuild every array with zarrox and compare bytes.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import zarr

HERE = Path(__file__).parent / "fixtures" / "rectilinear"

#: name -> (create_array keywords, values, a selection left unwritten: fill value there)
CASES: dict[str, dict[str, Any]] = {
    "one_d": {"shape": (23,), "dtype": "int32", "chunks": [[5, 1, 7, 10]], "compressors": None},
    "two_d_rle": {
        "shape": (17, 9),
        "dtype": "float64",
        "chunks": [[2, 2, 2, 2, 4, 5], 4],
        "fill_value": -1.5,
    },
    "three_d": {
        "shape": (6, 5, 7),
        "dtype": "uint16",
        "chunks": [[1, 2, 3], [5], [3, 3, 1]],
        "compressors": {"name": "zstd", "configuration": {"level": 5, "checksum": True}},
    },
    "sharded": {
        "shape": (20, 6),
        "dtype": "int16",
        "chunks": (2, 3),
        "shards": [[4, 8, 8], [6]],
    },
    "sharded_edges": {
        "shape": (12, 10),
        "dtype": "uint8",
        "chunks": (3, 2),
        "shards": [[3, 9], [4, 6]],
        "fill_value": 7,
    },
    "transposed": {
        "shape": (7, 5),
        "dtype": "int64",
        "chunks": [[3, 4], [1, 4]],
        "filters": [{"name": "transpose", "configuration": {"order": [1, 0]}}],
    },
}

#: arrays whose metadata declares overflow chunks past the extent (a shrink leaves them)
SHRUNK = {"overflow": ("one_d_src", (23,), [[5, 1, 7, 10]], (12,))}


def values(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.normal(size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def answers(a: Any) -> dict[str, Any]:
    def ask(name: str) -> Any:
        try:
            v = getattr(a, name)
        except NotImplementedError:
            return None
        return json.loads(json.dumps(v))

    return {
        k: ask(k)
        for k in (
            "cdata_shape",
            "nchunks",
            "read_chunk_sizes",
            "write_chunk_sizes",
            "chunks",
            "shards",
        )
    }


def main() -> None:
    if zarr.__version__ != "3.4.2":
        sys.exit(f"needs zarr 3.4.2, found {zarr.__version__}")
    zarr.config.set({"array.rectilinear_chunks": True})
    shutil.rmtree(HERE, ignore_errors=True)
    (HERE / "expected").mkdir(parents=True)
    root = zarr.open_group(zarr.storage.LocalStore(HERE / "store"), mode="w")
    expected: dict[str, Any] = {}
    for seed, (name, kw) in enumerate(CASES.items()):
        a = root.create_array(name, **kw)
        want = np.full(kw["shape"], a.fill_value, dtype=kw["dtype"])
        data = values(kw["shape"], kw["dtype"], seed)
        # Leave the last element's chunk of the first dimension unwritten in part: the rest
        # of the array is written, so missing chunks and fill values are both covered.
        region = tuple(slice(0, max(1, n - 3)) for n in kw["shape"])
        a[region] = data[region]
        want[region] = data[region]
        assert np.array_equal(a[...], want)
        np.save(HERE / "expected" / f"{name}.npy", want)
        expected[name] = {"create": kw, "metadata": a.metadata.to_dict(), **answers(a)}
    for name, (_, shape, chunks, shrink_to) in SHRUNK.items():
        a = root.create_array(name, shape=shape, chunks=chunks, dtype="int32")
        data = values(shape, "int32", 99)
        a[...] = data
        a.resize(shrink_to)
        want = data[: shrink_to[0]]
        assert np.array_equal(a[...], want)
        np.save(HERE / "expected" / f"{name}.npy", want)
        expected[name] = {
            "create": {"shape": shape, "chunks": chunks, "dtype": "int32"},
            "resize": shrink_to,
            "metadata": a.metadata.to_dict(),
            **answers(a),
        }
    (HERE / "expected.json").write_text(json.dumps(expected, indent=2, default=list) + "\n")


if __name__ == "__main__":
    main()
