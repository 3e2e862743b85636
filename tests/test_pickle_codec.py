"""numcodecs' ``pickle`` codec in v2 arrays: never unpickled unless the user opts in
(zarrox's ``array.allow_unsafe_pickle_decode`` in its own API, zarr-python's in its codec
pipeline), and, when allowed, read and written byte for byte as zarr-python and numcodecs do,
through both front doors."""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numcodecs
import numcodecs.pickles
import numpy as np
import pytest
import zarr
from numcodecs import Delta, Pickle, VLenBytes, VLenUTF8
from zarr.core.dtype import VariableLengthBytes, VariableLengthUTF8

import zarrox
from zarrox.errors import CodecError, PickleCodecDisabledError, UnsupportedError

ZARROX = {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
DEFAULT = {"codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline"}
ALLOW = "array.allow_unsafe_pickle_decode"
#: numcodecs >= 0.16.6 refuses Pickle.decode unless this module attribute is True
NUMCODECS_GATE = hasattr(numcodecs.pickles, "ALLOW_UNSAFE_PICKLE_DECODE")

#: what precedes the pickle codec: nothing (the chunk is pickled as an array, here a
#: big-endian Fortran-ordered one), or the vlen-utf8 / vlen-bytes filter of an object array
LAYOUTS: dict[str, dict[str, Any]] = {
    "array": {
        "zarr": {"dtype": ">i4", "order": "F"},
        "zarrox": {"dtype": ">i4", "order": "F"},
        "shape": (5, 3),
        "chunks": (2, 2),
        "values": np.arange(15, dtype=">i4").reshape(5, 3),
        "one": np.full((1, 3), -7, dtype=">i4"),
    },
    "utf8": {
        "zarr": {"dtype": VariableLengthUTF8(), "filters": [VLenUTF8()], "fill_value": ""},
        "zarrox": {"dtype": str, "filters": [VLenUTF8()], "fill_value": ""},
        "shape": (5,),
        "chunks": (2,),
        "values": np.array(["a", "bb", "", "dddd", "é"], dtype=object),
        "one": np.array(["zz"], dtype=object),
    },
    "bytes": {
        "zarr": {"dtype": VariableLengthBytes(), "filters": [VLenBytes()]},
        # zarr-python writes the empty fill value of a v2 bytes array as ""
        "zarrox": {"dtype": bytes, "filters": [VLenBytes()], "fill_value": ""},
        "shape": (5,),
        "chunks": (2,),
        "values": np.array([b"a", b"", b"xyz", b"\x00q", b"r"], dtype=object),
        "one": np.array([b"zz"], dtype=object),
    },
}


@contextlib.contextmanager
def numcodecs_allows(allowed: bool) -> Iterator[None]:
    """numcodecs' own opt-in (the pipeline decodes with numcodecs' Pickle)."""
    if not NUMCODECS_GATE:
        yield
        return
    old = numcodecs.pickles.ALLOW_UNSAFE_PICKLE_DECODE
    numcodecs.pickles.ALLOW_UNSAFE_PICKLE_DECODE = allowed
    try:
        yield
    finally:
        numcodecs.pickles.ALLOW_UNSAFE_PICKLE_DECODE = old


def with_pickle(kwargs: dict[str, Any], compressor: bool) -> dict[str, Any]:
    """``create_array`` arguments with pickle as the compressor, or as the last filter."""
    kwargs = dict(kwargs)
    if compressor:
        kwargs["compressors"] = Pickle()
    else:
        kwargs["filters"] = [*kwargs.get("filters", []), Pickle()]
        kwargs["compressors"] = None
    return kwargs


def zarr_writes(path: Path, layout: str, compressor: bool = True) -> Any:
    """The layout's array written by zarr-python with its own pipeline (pickle as the
    compressor, or as the last filter)."""
    spec = LAYOUTS[layout]
    kwargs = with_pickle(spec["zarr"], compressor)
    with zarr.config.set(DEFAULT):
        z = zarr.create_array(
            store=str(path), shape=spec["shape"], chunks=spec["chunks"], zarr_format=2, **kwargs
        )
        z[...] = spec["values"]
    return z


def chunk_files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if not p.name.startswith(".")}


def zarray(path: Path) -> dict[str, Any]:
    return json.loads((path / ".zarray").read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_own_api_refuses_to_unpickle_unless_opted_in(tmp_path: Path, layout: str) -> None:
    zarr_writes(tmp_path / "a", layout)
    a = zarrox.open_array(tmp_path / "a")
    with pytest.raises(PickleCodecDisabledError) as info:
        a[...]
    message = str(info.value)
    assert str(tmp_path / "a") in message and "chunk '0" in message
    assert 'zarrox.config.set({"array.allow_unsafe_pickle_decode": True})' in message
    if hasattr(zarr.errors, "PickleCodecDisabledError"):  # zarr-python >= 3.4
        assert isinstance(info.value, zarr.errors.PickleCodecDisabledError)
    # only True opts in, not a truthy string (an environment value read as text)
    with zarrox.config.set({ALLOW: "false"}), pytest.raises(PickleCodecDisabledError):
        a[...]
    with zarrox.config.set({ALLOW: True}):
        np.testing.assert_array_equal(a[...], LAYOUTS[layout]["values"])
    # an array whose chunks are all missing reads as its fill value without unpickling
    empty = zarrox.create_array(
        tmp_path / "e",
        shape=LAYOUTS[layout]["shape"],
        chunks=LAYOUTS[layout]["chunks"],
        zarr_format=2,
        compressors=Pickle(),
        **LAYOUTS[layout]["zarrox"],
    )
    assert empty[...].shape == LAYOUTS[layout]["shape"]


@pytest.mark.parametrize("compressor", [True, False], ids=["compressor", "last-filter"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_own_api_writes_and_reads_as_zarr_python(
    tmp_path: Path, layout: str, compressor: bool
) -> None:
    spec = LAYOUTS[layout]
    z = zarr_writes(tmp_path / "zarr", layout, compressor)
    kwargs = with_pickle(spec["zarrox"], compressor)
    a = zarrox.create_array(
        tmp_path / "zarrox", shape=spec["shape"], chunks=spec["chunks"], zarr_format=2, **kwargs
    )
    a[...] = spec["values"]  # whole chunks: written without opting in
    assert zarray(tmp_path / "zarrox") == zarray(tmp_path / "zarr")
    assert chunk_files(tmp_path / "zarrox") == chunk_files(tmp_path / "zarr")
    # a write into part of a stored chunk reads it first: that needs the opt-in
    with pytest.raises(PickleCodecDisabledError):
        a[1:2] = spec["one"]
    with zarrox.config.set({ALLOW: True}):
        a[1:2] = spec["one"]
        np.testing.assert_array_equal(zarrox.open_array(tmp_path / "zarr")[...], spec["values"])
    with zarr.config.set({**DEFAULT, ALLOW: True}), numcodecs_allows(True):
        z[1:2] = spec["one"]
        expected = spec["values"].copy()
        expected[1:2] = spec["one"]
        np.testing.assert_array_equal(z[...], expected)
    assert chunk_files(tmp_path / "zarrox") == chunk_files(tmp_path / "zarr")


def malicious_array(path: Path) -> None:
    """A v2 array whose one chunk, when unpickled, runs code that marks ``builtins``."""

    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return (exec, ("import builtins; builtins._zarrox_unpickled = True",))

    path.mkdir()
    meta = {
        "zarr_format": 2,
        "shape": [1],
        "chunks": [1],
        "dtype": "|O",
        "compressor": {"id": "pickle", "protocol": 5},
        "fill_value": None,
        "filters": [{"id": "vlen-utf8"}],
        "order": "C",
    }
    (path / ".zarray").write_text(json.dumps(meta))
    (path / "0").write_bytes(pickle.dumps(Payload()))


def test_a_refused_chunk_is_never_unpickled(tmp_path: Path) -> None:
    malicious_array(tmp_path / "a")
    with pytest.raises(PickleCodecDisabledError):
        zarrox.open_array(tmp_path / "a")[...]
    with zarr.config.set(ZARROX), numcodecs_allows(True):
        z = zarr.open_array(str(tmp_path / "a"), mode="r", zarr_format=2)
        with pytest.raises(PickleCodecDisabledError):
            z[...]
    assert not hasattr(builtins, "_zarrox_unpickled")
    # the proof that the chunk does what it says, once allowed
    with zarrox.config.set({ALLOW: True}), pytest.raises(CodecError, match="decoded a NoneType"):
        zarrox.open_array(tmp_path / "a")[...]
    assert builtins._zarrox_unpickled is True  # type: ignore[attr-defined]
    del builtins._zarrox_unpickled  # type: ignore[attr-defined]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_pipeline_follows_zarr_python_and_numcodecs(tmp_path: Path, layout: str) -> None:
    spec = LAYOUTS[layout]
    z = zarr_writes(tmp_path / "zarr", layout)
    # (zarr-python cannot open a numeric v2 array with the pickle codec again: it takes
    # pickle for the object codec of the data type; so the arrays are used as created)
    with zarr.config.set(ZARROX):
        w = zarr.create_array(
            store=str(tmp_path / "zarrox"),
            shape=spec["shape"],
            chunks=spec["chunks"],
            zarr_format=2,
            compressors=Pickle(),
            **spec["zarr"],
        )
        w[...] = spec["values"]  # whole chunks: written without opting in
        assert chunk_files(tmp_path / "zarrox") == chunk_files(tmp_path / "zarr")
        with pytest.raises(PickleCodecDisabledError) as info:
            w[...]
        # zarr-python's opt-in and numcodecs' are both named
        assert "array.allow_unsafe_pickle_decode" in str(info.value)
        assert "ALLOW_UNSAFE_PICKLE_DECODE" in str(info.value)
        with pytest.raises(PickleCodecDisabledError):
            w[1:2] = spec["one"]
        with zarr.config.set({ALLOW: "false"}), pytest.raises(PickleCodecDisabledError):
            w[...]
        with zarr.config.set({ALLOW: True}), numcodecs_allows(True):
            np.testing.assert_array_equal(w[...], spec["values"])
            w[1:2] = spec["one"]
        if NUMCODECS_GATE:
            with zarr.config.set({ALLOW: True}), numcodecs_allows(False):
                with pytest.raises(numcodecs.errors.UnsafeDecodeError):
                    w[...]
    assert chunk_files(tmp_path / "zarrox") != chunk_files(tmp_path / "zarr")
    with zarr.config.set({**DEFAULT, ALLOW: True}), numcodecs_allows(True):
        z[1:2] = spec["one"]
    assert chunk_files(tmp_path / "zarrox") == chunk_files(tmp_path / "zarr")


def test_unsupported_places_of_the_pickle_codec(tmp_path: Path) -> None:
    # after a value filter (numcodecs would pickle the filter's own output array)
    with pytest.raises(UnsupportedError, match="pickle codec is supported after no filter"):
        zarrox.create_array(
            tmp_path / "a",
            shape=(4,),
            dtype="<i4",
            zarr_format=2,
            filters=[Delta(dtype="<i4")],
            compressors=Pickle(),
        )
    # before another codec
    with pytest.raises(UnsupportedError, match="supported as the compressor or the last"):
        zarrox.create_array(
            tmp_path / "b",
            shape=(4,),
            dtype="<i4",
            zarr_format=2,
            filters=[Pickle()],
            compressors=numcodecs.Zlib(),
        )
    assert not os.path.exists(tmp_path / "b" / ".zarray")
