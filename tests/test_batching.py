"""Reads of many arrays at once (issue 43, item 1): ``zarrox.read_many`` and ``zarrox.batch``.

Checked here: results equal ``array[selection]`` for every kind of selection, across arrays
of different stores, data types and formats (v2, v3, sharded, variable-length, a store served
from Python), with ``out=`` buffers; on S3 the reads' requests are in flight together (a read
whose chunk request the proxy holds back is answered last, not first); errors name the array
and chunk and come after every read has ended; ``Batch`` collects reads and issues them when
its block ends, and issues nothing when the block raises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import servers
import zarrox
from zarrox.errors import BoundsCheckError, CorruptChunkError


def _arrays(tmp_path: Path) -> tuple[list[zarrox.Array], list[np.ndarray]]:
    """Arrays of different stores, formats and data types, with their values."""
    refs = [
        np.arange(20 * 15, dtype="int32").reshape(20, 15),
        (np.arange(12 * 10) / 7).reshape(12, 10).astype(">f8"),
        np.arange(16 * 16, dtype="uint16").reshape(16, 16),
        np.array([f"s{i}" * (i % 3) for i in range(30)], dtype=object).reshape(6, 5),
        np.arange(40, dtype="int8").reshape(8, 5),
    ]
    arrays = [
        zarrox.create_array(tmp_path / "a.zarr", shape=(20, 15), dtype="int32", chunks=(4, 5)),
        zarrox.create_array(
            tmp_path / "v2.zarr", shape=(12, 10), dtype=">f8", chunks=(5, 5), zarr_format=2
        ),
        zarrox.create_array(
            zarrox.MemoryStore(), shape=(16, 16), dtype="uint16", chunks=(4, 4), shards=(8, 16)
        ),
        zarrox.create_array(zarrox.MemoryStore(), shape=(6, 5), dtype=str, chunks=(3, 2)),
        zarrox.create_array(
            zarrox.storage.DictMemoryStore(), shape=(8, 5), dtype="int8", chunks=(3, 3)
        ),
    ]
    for a, ref in zip(arrays, refs, strict=True):
        a[...] = ref
    return arrays, refs


SELECTIONS: list[Any] = [
    (slice(1, 7), slice(None, None, 2)),
    (2, 3),
    Ellipsis,
    ([0, 3, 1], slice(1, 4)),  # orthogonal
    (np.array([0, 5, 2]), np.array([1, 4, 0])),  # coordinates
    (1, Ellipsis),
]


def test_read_many_equals_getitem_across_stores_formats_and_dtypes(tmp_path: Path) -> None:
    arrays, refs = _arrays(tmp_path)
    reads = [(a, s) for a in arrays for s in SELECTIONS]
    got = zarrox.read_many(reads)
    assert len(got) == len(reads)
    expected = [_numpy(ref, s) for ref in refs for s in SELECTIONS]
    for (a, s), value, want in zip(reads, got, expected, strict=True):
        np.testing.assert_array_equal(value, want)
        single = a[s]  # what one read gives: the same type, dtype and shape
        assert type(value) is type(single), (a, s)
        if isinstance(single, np.ndarray):
            assert value.dtype == single.dtype and value.shape == single.shape


def _numpy(ref: np.ndarray, selection: Any) -> Any:
    """numpy's answer to ``ref[selection]`` with Zarr's meaning (a list of indices with a
    slice is an orthogonal selection)."""
    if isinstance(selection, tuple) and isinstance(selection[0], list):
        return ref[np.ix_(selection[0], range(*selection[1].indices(ref.shape[1])))]
    return ref[selection]


def test_read_many_into_out_buffers_and_a_mask(tmp_path: Path) -> None:
    arrays, refs = _arrays(tmp_path)
    a, b = arrays[0], arrays[2]
    out_a = np.zeros((6, 8), dtype="int32")
    mask = np.zeros(b.shape, dtype=bool)
    mask[3, 2:9] = True
    got = zarrox.read_many([(a, (slice(2, 8), slice(0, 8))), (b, mask)], out=[out_a, None])
    assert got[0] is out_a
    np.testing.assert_array_equal(out_a, refs[0][2:8, 0:8])
    np.testing.assert_array_equal(got[1], refs[2][mask])


def test_two_reads_may_not_share_an_output_buffer(tmp_path: Path) -> None:
    arrays, _ = _arrays(tmp_path)
    out = np.zeros((2, 2), dtype="int32")
    with pytest.raises(ValueError, match="share an output buffer"):
        zarrox.read_many([(arrays[0], (slice(0, 2), slice(0, 2)))] * 2, out=[out, out])


def test_errors_name_the_array_and_come_after_every_read(tmp_path: Path) -> None:
    arrays, refs = _arrays(tmp_path)
    with pytest.raises(BoundsCheckError):
        zarrox.read_many([(arrays[0], (0, 0)), (arrays[2], (99, 0))])
    # a chunk that cannot be decoded: the error names the array and chunk
    (tmp_path / "a.zarr" / "c" / "1" / "1").write_bytes(b"\x00" * 3)
    out_ok = np.zeros((16, 16), dtype="uint16")
    with pytest.raises(CorruptChunkError, match=r"a\.zarr.*chunk 'c/1/1'"):
        zarrox.read_many([(arrays[0], Ellipsis), (arrays[2], Ellipsis)], out=[None, out_ok])
    np.testing.assert_array_equal(out_ok, refs[2])  # the other read ended, and it is whole


def test_batch_collects_reads_and_issues_them_when_the_block_ends(tmp_path: Path) -> None:
    arrays, refs = _arrays(tmp_path)
    with zarrox.batch() as b:
        r1 = b.read(arrays[0], (slice(0, 3), 4))
        r2 = b.read(arrays[3], (slice(None), 0))
        assert not r1.done()
        with pytest.raises(RuntimeError, match="not been submitted"):
            r1.result()
    assert r1.done() and r2.done()
    np.testing.assert_array_equal(r1.result(), refs[0][0:3, 4])
    np.testing.assert_array_equal(r2.result(), refs[3][:, 0])
    with pytest.raises(RuntimeError, match="submitted"):
        b.read(arrays[0], 0)


def test_a_batch_left_by_an_exception_issues_nothing(tmp_path: Path) -> None:
    arrays, _ = _arrays(tmp_path)
    b = zarrox.Batch()
    with pytest.raises(KeyError), b:
        r = b.read(arrays[0], Ellipsis)
        raise KeyError("stop")
    assert not r.done()


def test_s3_reads_are_in_flight_together(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    """Eight arrays of one chunk each on S3: the proxy holds the first array's chunk request
    back for 3 s. Issued together, every other read's request is answered while it waits,
    so it is answered last; read one after the other, it would be answered first."""
    opts = proxied_bucket.object_store_options()
    refs = [np.full((4, 4), i, dtype="int16") for i in range(8)]
    arrays = []
    for i, ref in enumerate(refs):
        url = proxied_bucket.url(f"batch/v{i}.zarr")
        a = zarrox.create_array(
            url, shape=(4, 4), dtype="int16", chunks=(4, 4), storage_options=opts
        )
        a[...] = ref
        arrays.append(zarrox.open_array(url, mode="r", storage_options=opts))
    slow = servers.FaultRule(
        "delay", path_regex=r"/batch/v0\.zarr/c/0/0", methods=("GET",), delay_s=3.0, times=1
    )
    with s3_proxy.faults(slow):
        got = zarrox.read_many([(a, Ellipsis) for a in arrays])
        # the answers (a held request is logged once when held, once when answered)
        log = [
            e
            for e in s3_proxy.log()
            if e["method"] == "GET" and "/c/0/0" in e["path"] and e["status"] is not None
        ]
    for value, ref in zip(got, refs, strict=True):
        np.testing.assert_array_equal(value, ref)
    assert len(log) == 8, [(e["path"][-16:], e["action"], e["status"]) for e in log]
    assert "/batch/v0.zarr/" in log[-1]["path"], [e["path"] for e in log]
