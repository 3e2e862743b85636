"""Write the seed corpus of the fuzz targets (fuzz/seeds/<target>/): real chunks of every
chain of chains.json, written by zarr-python 3.1 (numcodecs underneath) where it has the
codecs, else by zarrox (MANIFEST.json says which), and the core metadata zarrox hands to Rust
for arrays of each format. Deterministic (gzip headers get a zero time stamp): run it again
after changing chains.json.

    .venv/bin/python fuzz/make_corpus.py
"""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import zarr

import zarrox

HERE = Path(__file__).parent
SEEDS = HERE / "seeds"
CHAINS = json.loads((HERE / "chains.json").read_text())
#: zarr-python 3.1's names of the variable-length types zarrox calls string and bytes
ZARR_DTYPE = {"bytes": "variable_length_bytes"}


def sample_data(dtype: str, shape: list[int], variant: int) -> Any:
    """Chunk contents: a ramp (variant 0) or seeded random values (1)."""
    n = int(np.prod(shape))
    rng = np.random.default_rng(variant)
    if dtype == "string":
        words = ["", "a", "bé", "zarr", "ünïcode", "x" * 40]
        items = [words[(i + variant) % len(words)] for i in range(n)]
        return np.array(items, dtype=object).reshape(shape)
    if dtype == "bytes":
        items = [
            bytes(rng.integers(0, 256, (i * 3 + variant) % 11, dtype=np.uint8)) for i in range(n)
        ]
        return np.array(items, dtype=object).reshape(shape)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        x = (np.arange(n) % 3 == 0) if variant == 0 else rng.random(n) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        x = (
            (np.arange(n) % 97 * 3).astype(dt)
            if variant == 0
            else rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        )
    elif dt.kind == "c":
        x = (np.linspace(-1, 1, n) + 1j * np.arange(n)).astype(dt)
    else:
        x = (np.linspace(1000, 1003, n) if variant == 0 else rng.normal(1000, 10, n)).astype(dt)
    return x.reshape(shape)


def with_configurations(codecs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`codecs` with an explicit (empty) configuration where it is left out, which zarr-python
    3.1 requires; nested chains included."""
    out = []
    for c in codecs:
        cfg = dict(c.get("configuration", {}))
        for key in ("codecs", "index_codecs"):
            if key in cfg:
                cfg[key] = with_configurations(cfg[key])
        out.append({"name": c["name"], "configuration": cfg})
    return out


def zarr_json(entry: dict[str, Any]) -> dict[str, Any]:
    dtype = entry["dtype"]
    fill: Any = {"bool": False, "string": "", "bytes": ""}.get(dtype, 0)
    if dtype.startswith("complex"):
        fill = [0.0, 0.0]
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": entry["shape"],
        "data_type": ZARR_DTYPE.get(dtype, dtype),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": entry["shape"]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": with_configurations(entry["codecs"]),
        "attributes": {},
    }


def chunk_key(entry: dict[str, Any]) -> str:
    return "c/" + "/".join("0" for _ in entry["shape"])


def write_chunk(entry: dict[str, Any], data: Any, root: Path) -> tuple[bytes, str]:
    """The stored chunk of `data` under `entry`'s chain, and which library wrote it."""
    node = root / entry["name"]
    if entry.get("writer") != "zarrox":
        try:
            node.mkdir(parents=True)
            (node / "zarr.json").write_text(json.dumps(zarr_json(entry)))
            with zarr.config.set({"array.write_empty_chunks": True}):
                a = zarr.open_array(str(node), mode="r+")
                a[...] = data
            return (node / chunk_key(entry)).read_bytes(), f"zarr-python {zarr.__version__}"
        except Exception as e:  # a codec or type zarr-python 3.1 lacks
            print(f"  {entry['name']}: zarr-python cannot write it ({e}); zarrox does")
            shutil.rmtree(node, ignore_errors=True)
    store = zarrox.MemoryStore()
    dtype = {"string": str}.get(entry["dtype"], entry["dtype"])
    a = zarrox.create_array(
        store,
        shape=entry["shape"],
        dtype=dtype,
        chunks=entry["shape"],
        codecs=entry["codecs"],
        config={"write_empty_chunks": True},
    )
    a[...] = data
    raw = store.get(chunk_key(entry))
    assert raw is not None
    return bytes(raw), f"zarrox {zarrox.__version__}"


def main() -> None:
    warnings.simplefilter("ignore")
    # numcodecs' GZip writes the current time into each member's header.
    with mock.patch.object(gzip, "time", mock.Mock(time=lambda: 0)):
        write_seeds()


def write_seeds() -> None:
    shutil.rmtree(SEEDS, ignore_errors=True)
    manifest: dict[str, dict[str, str]] = {}

    def put(target: str, name: str, content: bytes, writer: str) -> None:
        d = SEEDS / target
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(content)
        manifest.setdefault(target, {})[name] = writer

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cores: dict[str, dict[str, Any]] = {}
        for group, target in (
            ("v3", "decode_v3"),
            ("numcodecs", "decode_numcodecs"),
            ("vlen", "decode_vlen"),
        ):
            sharded = [e for e in CHAINS[group] if e["codecs"][0]["name"] == "sharding_indexed"]
            for i, entry in enumerate(CHAINS[group]):
                for variant in (0, 1):
                    data = sample_data(entry["dtype"], entry["shape"], variant)
                    sub = root / f"{group}-{variant}"
                    chunk, writer = write_chunk(entry, data, sub)
                    name = f"{i:02d}-{entry['name']}-{variant}"
                    prefix = bytes([0, i]) if group == "vlen" else bytes([i])
                    put(target, name, prefix + chunk, writer)
                    if entry in sharded:
                        put("shard_index", name, bytes([sharded.index(entry)]) + chunk, writer)
                    if entry["name"] == "vlen-utf8":
                        n = int(np.prod(entry["shape"]))
                        put(
                            target,
                            f"frame-{variant}",
                            b"\x01" + n.to_bytes(2, "little") + chunk,
                            writer,
                        )
                    if variant == 0 and (sub / entry["name"] / "zarr.json").exists():
                        a = zarrox.open_array(str(sub / entry["name"]), mode="r")
                        cores[f"v3-{entry['name']}"] = a._core
                    elif variant == 0 and entry.get("writer") == "zarrox":
                        a = zarrox.create_array(
                            zarrox.MemoryStore(),
                            shape=entry["shape"],
                            dtype={"string": str}.get(entry["dtype"], entry["dtype"]),
                            chunks=entry["shape"],
                            codecs=entry["codecs"],
                        )
                        cores[f"v3-{entry['name']}"] = a._core
        # The core metadata of the other formats' arrays (v2 with filters and F order).
        store = zarrox.MemoryStore()
        for name, kwargs in {
            "v2-zlib-delta-F": dict(
                dtype=">i4",
                compressors={"id": "zlib", "level": 1},
                filters=[{"id": "delta", "dtype": ">i4"}],
                order="F",
            ),
            "v2-blosc": dict(dtype="<f8", compressors={"id": "blosc", "cname": "lz4"}),
            "v2-strings": dict(dtype=str),
            "v2-structured": dict(dtype=[("a", "<i2"), ("b", "<f4", (2,))]),
        }.items():
            a = zarrox.create_array(
                store, name=name, shape=(10, 7), chunks=(4, 3), zarr_format=2, **kwargs
            )
            cores[name] = a._core
        for name, kwargs in {
            "v3-sharded-3d": dict(
                dtype="uint16", shape=(64, 64, 8), chunks=(8, 8, 8), shards=(32, 32, 8)
            ),
            "v3-v2-keys": dict(
                dtype="float32",
                shape=(10,),
                chunks=(3,),
                chunk_key_encoding={"name": "v2", "separator": "."},
            ),
            "v3-0d": dict(dtype="int8", shape=(), chunks=()),
            "v3-bfloat16": dict(dtype="bfloat16", shape=(6, 6), chunks=(3, 3)),
        }.items():
            try:
                a = zarrox.create_array(store, name=name, **kwargs)
            except Exception as e:
                print(f"  {name}: {e}")
                continue
            cores[name] = a._core
        for name, core in cores.items():
            put(
                "metadata",
                f"{name}.json",
                json.dumps(core).encode(),
                f"zarrox {zarrox.__version__}",
            )
    (SEEDS / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    for target, files in sorted(manifest.items()):
        print(f"{target}: {len(files)} seeds")


if __name__ == "__main__":
    main()
