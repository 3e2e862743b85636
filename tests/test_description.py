"""The one description of an array handed to the Rust core
(:class:`zarrox.metadata.description.ArrayDescription`): every format's model gives exactly
the documented members, in the documented forms, and the core opens an array from that
description alone and reads the stored values with it."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrox
from zarrox import _core
from zarrox.errors import MetadataError
from zarrox.metadata.chunk_grid import RectilinearGrid
from zarrox.metadata.description import ArrayDescription, KeyEncodingDescription

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LEGACY = FIXTURES / "legacy"
RECTILINEAR = FIXTURES / "rectilinear"


def _legacy_cases() -> list[tuple[Path, str, np.ndarray]]:
    """(store root, node path, saved values) of every v1 and draft v3 fixture array."""
    out = []
    for name in ("v1_zarr1", "draft_zarr2", "draft_zarr2_root", "draft_spec", "draft_spec_noroot"):
        arrays = json.loads((LEGACY / name / "expected.json").read_text())["arrays"]
        for path in arrays:
            saved = LEGACY / name / "expected" / ((path or "root").replace("/", "__") + ".npy")
            if name == "v1_zarr1":
                out.append((LEGACY / name / "stores" / path, "", np.load(saved)))
            else:
                out.append((LEGACY / name / "store", path, np.load(saved)))
    return out


def _rectilinear_cases() -> list[tuple[Path, str, np.ndarray]]:
    names = json.loads((RECTILINEAR / "expected.json").read_text())
    return [
        (RECTILINEAR / "store", n, np.load(RECTILINEAR / "expected" / f"{n}.npy"))
        for n in sorted(names)
    ]


def _written(root: Path) -> list[tuple[Path, str, np.ndarray]]:
    """v2 and v3 arrays zarrox writes: plain, Fortran order, filters and a compressor,
    big-endian, sharded, strings."""
    values = np.arange(7 * 5, dtype="int32").reshape(7, 5)
    cases: list[tuple[str, dict[str, Any], np.ndarray]] = [
        ("v3", {"zarr_format": 3, "chunks": (3, 2)}, values),
        ("v3_sharded", {"zarr_format": 3, "chunks": (1, 1), "shards": (3, 2)}, values),
        ("v3_v2_keys", {"zarr_format": 3, "chunks": (3, 2), "chunk_key_encoding": "v2"}, values),
        ("v3_big", {"zarr_format": 3, "chunks": (3, 2)}, values.astype(">f8")),
        ("v3_0d", {"zarr_format": 3, "chunks": ()}, np.array(4.5)),
        ("v2", {"zarr_format": 2, "chunks": (3, 2)}, values),
        ("v2_f", {"zarr_format": 2, "chunks": (3, 2), "order": "F"}, values),
        ("v2_big", {"zarr_format": 2, "chunks": (3, 2)}, values.astype(">u2")),
        (
            "v2_filters",
            {
                "zarr_format": 2,
                "chunks": (3, 2),
                "filters": [{"id": "delta", "dtype": "<i4"}],
                "compressors": {"id": "zlib", "level": 1},
            },
            values,
        ),
        ("v2_strings", {"zarr_format": 2, "chunks": (2,)}, np.array(["a", "bc", "def"], "O")),
        ("v3_strings", {"zarr_format": 3, "chunks": (2,)}, np.array(["a", "bc", "def"], "O")),
    ]
    out = []
    for name, kwargs, value in cases:
        dtype = str if value.dtype.kind == "O" else value.dtype
        a = zarrox.create_array(root, name=name, shape=value.shape, dtype=dtype, **kwargs)
        a[...] = value
        out.append((root, name, value))
    return out


CASES = _legacy_cases() + _rectilinear_cases()
IDS = [f"{root.name}:{path or '/'}" for root, path, _ in CASES]


def _check_members(description: dict[str, Any]) -> None:
    """Exactly the members :class:`ArrayDescription` documents, in their forms."""
    required = ArrayDescription.__required_keys__
    optional = ArrayDescription.__optional_keys__
    assert required == {"shape", "data_type", "codecs", "chunk_key_encoding"}
    assert optional == {"chunk_shape", "chunk_shapes"}
    assert required <= set(description) <= required | optional
    # one grid: a regular grid's chunk shape or a rectilinear grid's chunk shapes
    assert len(set(description) & optional) == 1
    documented = set(typing.get_type_hints(ArrayDescription))
    assert documented == required | optional
    for member in documented:
        assert f"``{member}``" in (ArrayDescription.__doc__ or "")
    assert all(isinstance(n, int) and n >= 0 for n in description["shape"])
    if "chunk_shape" in description:
        assert len(description["chunk_shape"]) == len(description["shape"])
        assert all(isinstance(n, int) and n > 0 for n in description["chunk_shape"])
    else:
        assert len(description["chunk_shapes"]) == len(description["shape"])
    assert isinstance(description["data_type"], str | dict)
    for codec in description["codecs"]:
        assert set(codec) <= {"name", "configuration"}, codec
    encoding = description["chunk_key_encoding"]
    keys = KeyEncodingDescription
    assert (
        keys.__required_keys__ <= set(encoding) <= keys.__required_keys__ | keys.__optional_keys__
    )
    assert encoding["name"] in ("default", "v2", "draft_v3")
    assert encoding["separator"] in ("/", ".")
    assert ("zero_d_key" in encoding) == (encoding["name"] == "draft_v3")


def _open_from_description(root: Path, path: str) -> tuple[Any, dict[str, Any]]:
    """The core's array opened from the description of the array at ``path`` alone."""
    meta = zarrox.open_array(root, path=path, mode="r").metadata
    description = meta.to_core_json()
    _check_members(description)
    handle = _core.ArrayHandle(
        _core.StoreHandle.local(root),
        getattr(meta, "data_path", path),  # the draft v3 layout keeps chunks apart
        json.dumps(description),
        meta.fill_bytes(),
    )
    return handle, description


def _assert_reads(handle: Any, expected: np.ndarray) -> None:
    """The values the core reads with the description are the stored ones."""
    native = expected.dtype.newbyteorder("=") if expected.dtype.kind in "biufc" else expected.dtype
    got = handle.read_basic((Ellipsis,), native)
    if expected.dtype.kind == "O":
        assert got is None  # variable-length: read element by element, not by bytes
        return
    assert got is not None
    assert got.dtype == native and got.shape == expected.shape
    want = np.ascontiguousarray(expected.astype(native))
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize(("root", "path", "expected"), CASES, ids=IDS)
def test_fixture_descriptions(root: Path, path: str, expected: np.ndarray) -> None:
    handle, description = _open_from_description(root, path)
    if root.parent == RECTILINEAR:
        assert "chunk_shapes" in description
    _assert_reads(handle, expected)


def test_written_descriptions(tmp_path: Path) -> None:
    seen: set[tuple[str, str]] = set()
    for root, path, expected in _written(tmp_path):
        handle, description = _open_from_description(root, path)
        _assert_reads(handle, expected)
        encoding = description["chunk_key_encoding"]
        seen.add((encoding["name"], encoding["separator"]))
        if path == "v2_f":
            assert description["codecs"][0] == {
                "name": "transpose",
                "configuration": {"order": [1, 0]},
            }
        if path == "v2_filters":
            assert [c["name"] for c in description["codecs"]] == [
                "numcodecs.delta",
                "bytes",
                "numcodecs.zlib",
            ]
        if path == "v3_sharded":
            assert [c["name"] for c in description["codecs"]] == ["sharding_indexed"]
    assert seen == {("default", "/"), ("v2", ".")}


def test_rectilinear_description_is_the_grid() -> None:
    """A rectilinear grid is described by its chunk shapes, every run a pair."""
    grid = RectilinearGrid((2, ((3, 2), (1, 1))))
    meta = zarrox.metadata.ArrayMetadataV3.create(shape=(4, 7), dtype="int8", chunk_shape=grid)
    description = meta.to_core_json()
    _check_members(description)
    assert description["chunk_shapes"] == [2, [[3, 2], [1, 1]]]


@pytest.mark.parametrize("member", ["shape", "data_type", "codecs", "chunk_key_encoding"])
def test_every_required_member_is_read(member: str, tmp_path: Path) -> None:
    """The core reads every required member: without it, it does not open the array."""
    zarrox.create_array(tmp_path, name="a", shape=(4,), chunks=(2,), dtype="int16")
    meta = zarrox.open_array(tmp_path, path="a", mode="r").metadata
    description = meta.to_core_json()
    del description[member]
    with pytest.raises(MetadataError, match="invalid metadata: missing field"):
        _core.ArrayHandle(
            _core.StoreHandle.local(tmp_path), "a", json.dumps(description), meta.fill_bytes()
        )
