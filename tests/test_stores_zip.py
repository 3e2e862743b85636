"""Zip files written by zarr-python (its own pipeline, ``zarr.storage.ZipStore``) read back by
zarr-python with zarrox's codec pipeline (strict): v3 and v2 arrays, sharded, groups and
consolidated metadata; values compared exactly."""

from __future__ import annotations

import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import assert_identical, make_data

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")

ZARROX = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
SHAPE = (23, 19)
ARRAYS: dict[str, dict[str, Any]] = {
    "zstd": {"chunks": (8, 8), "compressors": zarr.codecs.ZstdCodec(level=3)},
    "sharded": {"chunks": (4, 5), "shards": (8, 10), "compressors": zarr.codecs.GzipCodec()},
    "sub/crc": {"chunks": (23, 4), "compressors": zarr.codecs.Crc32cCodec()},
    "v2": {"chunks": (10, 10), "zarr_format": 2, "compressors": numcodecs.Blosc(cname="lz4")},
}


def data_of(name: str) -> np.ndarray:
    return make_data("int64", SHAPE, seed=len(name))


@pytest.fixture(scope="module")
def zip_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("zip") / "store.zip"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = zarr.storage.ZipStore(path, mode="w")
        zarr.open_group(store, mode="w", attributes={"made": "zarr-python"})
        zarr.open_group(store, path="v2g", mode="w", zarr_format=2)
        for name, kwargs in ARRAYS.items():
            node = name if "zarr_format" not in kwargs else f"v2g/{name}"
            a = zarr.create_array(
                store, name=node, shape=SHAPE, dtype="int64", fill_value=-1, **kwargs
            )
            a[...] = data_of(name)
        zarr.consolidate_metadata(store, zarr_format=3)
        zarr.consolidate_metadata(store, path="v2g", zarr_format=2)
        store.close()
    assert zipfile.is_zipfile(path)
    return path


@pytest.fixture(autouse=True)
def zarrox_pipeline() -> Iterator[None]:
    with zarr.config.set(ZARROX), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def read_store(path: Path) -> Any:
    return zarr.storage.ZipStore(path, mode="r")


@pytest.mark.parametrize("name", list(ARRAYS))
def test_arrays_in_a_zip_written_by_zarr_python(zip_path: Path, name: str) -> None:
    path = name if "zarr_format" not in ARRAYS[name] else f"v2g/{name}"
    a = zarr.open_array(read_store(zip_path), path=path, mode="r")
    assert type(a._async_array.codec_pipeline).__name__ == "ZarroxCodecPipeline"
    want = data_of(name)
    assert_identical(a[...], want, name)
    assert_identical(a[5:20:3, 2:], want[5:20:3, 2:], f"{name} strided")
    assert_identical(a.vindex[[0, 22, 7], [18, 0, 9]], want[[0, 22, 7], [18, 0, 9]], name)


def test_consolidated_group_in_a_zip(zip_path: Path) -> None:
    g = zarr.open_group(read_store(zip_path), mode="r")
    assert g.metadata.consolidated_metadata is not None
    assert g.attrs["made"] == "zarr-python"
    assert sorted(k for k, _ in g.members(max_depth=None)) == ["sharded", "sub", "sub/crc", "zstd"]
    assert_identical(g["sub/crc"][...], data_of("sub/crc"), "sub/crc")
    g2 = zarr.open_group(read_store(zip_path), path="v2g", mode="r", zarr_format=2)
    assert g2.metadata.consolidated_metadata is not None
    assert sorted(g2.array_keys()) == ["v2"]
    assert_identical(g2["v2"][...], data_of("v2"), "v2")
