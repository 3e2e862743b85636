"""Transactions (issue #43 item 2): writes staged in memory, reads seeing them, nothing
stored until the commit, each stored object written once on commit (one request per shard,
counted through the S3 fault proxy), an exception or an abort discarding everything, the
budget, and the errors. Many processes' transactions committing into the same shards:
tests/test_concurrent_writers.py."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import servers
import zarrox
from zarrox.errors import TransactionError, WriteConflictError


def _snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` with a digest of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


#: layouts of a 2-d array of 30 x 26: (create_array keywords)
LAYOUTS = {
    "chunks": {"chunks": (7, 5)},
    "shards": {"chunks": (4, 4), "shards": (8, 12)},
    "rectilinear": {"chunks": [[10, 5, 15], [20, 6]]},
    "v2-F": {"chunks": (7, 5), "zarr_format": 2, "order": "F"},
}


def _array(root: Path, layout: str, dtype: str = "int32") -> zarrox.Array:
    kwargs = dict(LAYOUTS[layout])
    return zarrox.create_array(
        str(root / layout), shape=(30, 26), dtype=dtype, fill_value=-1, **kwargs
    )


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_reads_inside_see_the_staged_writes_and_the_store_is_untouched_until_commit(
    root: Path, layout: str
) -> None:
    a = _array(root, layout)
    model = np.arange(30 * 26, dtype="int32").reshape(30, 26)
    a[...] = model
    before = _snapshot(root)
    rng = np.random.default_rng(0)
    with zarrox.transaction() as tx:
        a[2:9, 3:11] = 1000
        model[2:9, 3:11] = 1000
        a.oindex[[0, 17, 29], [1, 25]] = np.array([[1, 2], [3, 4], [5, 6]], dtype="int32")
        model[np.ix_([0, 17, 29], [1, 25])] = [[1, 2], [3, 4], [5, 6]]
        a.vindex[[5, 6, 28], [20, 0, 13]] = [7, 8, 9]
        model[[5, 6, 28], [20, 0, 13]] = [7, 8, 9]
        mask = rng.random((30, 26)) < 0.05
        a.vindex[mask] = -5
        model[mask] = -5
        a.blocks[1, 0] = 77
        b0, b1 = _block_slices(a, 1, 0)
        model[b0, b1] = 77
        a[29, 25] = 123
        model[29, 25] = 123
        # reads of every kind see them (and what is not staged comes from the store)
        np.testing.assert_array_equal(a[...], model)
        np.testing.assert_array_equal(a[1:20:3, 4:], model[1:20:3, 4:])
        np.testing.assert_array_equal(a.oindex[[29, 0, 5], :], model[[29, 0, 5], :])
        np.testing.assert_array_equal(a.vindex[[5, 6, 1], [20, 0, 1]], model[[5, 6, 1], [20, 0, 1]])
        np.testing.assert_array_equal(a.vindex[mask], model[mask])
        np.testing.assert_array_equal(a.blocks[1, 0], model[b0, b1])
        assert a[29, 25] == 123
        out = np.empty((7, 8), dtype="int32")
        a.get_basic_selection((slice(2, 9), slice(3, 11)), out=out)
        np.testing.assert_array_equal(out, model[2:9, 3:11])
        fout = np.empty((30, 26), dtype="int32", order="F")
        a.get_basic_selection(Ellipsis, out=fout)
        np.testing.assert_array_equal(fout, model)
        # another Array object of the same stored array sees them too
        again = zarrox.open_array(str(root / layout))
        np.testing.assert_array_equal(again[...], model)
        np.testing.assert_array_equal(zarrox.read_many([(a, Ellipsis), (again, (0,))])[1], model[0])
        assert tx.staged_bytes > 0
        # nothing stored yet
        assert _snapshot(root) == before
    assert tx.committed
    np.testing.assert_array_equal(zarrox.open_array(str(root / layout), mode="r")[...], model)


def _block_slices(a: zarrox.Array, i: int, j: int) -> tuple[slice, slice]:
    sizes = a.write_chunk_sizes
    starts = [np.cumsum((0, *s)) for s in sizes]
    return slice(starts[0][i], starts[0][i + 1]), slice(starts[1][j], starts[1][j + 1])


def test_chunks_staged_whole_and_marks_agree(root: Path) -> None:
    """The commit knows a shard is written whole from the writes that covered its chunks
    (no look at its marks), or from its marks; both give the values written."""
    a = zarrox.create_array(
        str(root / "w"), shape=(30, 26), chunks=(4, 4), shards=(8, 12), dtype="i4", fill_value=-1
    )
    a[...] = 0
    model = np.zeros((30, 26), dtype="i4")
    with zarrox.transaction() as tx:
        # the edge shard (grid (3, 2): rows 24-29, columns 24-25): its two inner chunks
        # written whole by one-call writes
        a[24:28, 24:26] = np.full((4, 2), 5, dtype="i4")
        a[28:30, 24:26] = np.full((2, 2), 6, dtype="i4")
        model[24:28, 24:26], model[28:30, 24:26] = 5, 6
        # shard (0, 0): every element written, by writes of half chunks
        for i in range(0, 8, 2):
            a[i : i + 2, 0:12] = np.full((2, 12), i + 1, dtype="i4")
            model[i : i + 2, 0:12] = i + 1
        # shard (1, 1): one inner chunk whole, and one element (the general path)
        a[8:12, 12:16] = np.full((4, 4), 7, dtype="i4")
        a[13, 20] = 9
        model[8:12, 12:16], model[13, 20] = 7, 9
        (staged,) = tx._staged.values()
        assert staged.objects() == {(3, 2): True, (0, 0): False, (1, 1): False}
        np.testing.assert_array_equal(a[...], model)
    np.testing.assert_array_equal(zarrox.open_array(str(root / "w"))[...], model)


def test_variable_length_strings_and_fill_value_edges(root: Path) -> None:
    s = zarrox.create_array(str(root / "s"), shape=(11,), chunks=(4,), dtype=str)
    s[...] = np.array([f"v{i}" for i in range(11)])
    expect = ["first", "v1", "v2"] + ["staged"] * 3 + ["v6", "v7", "v8", "v9", "last"]
    with zarrox.transaction():
        s[3:6] = "staged"
        s.vindex[[10, 0]] = ["last", "first"]
        assert s[...].tolist() == expect
    assert zarrox.open_array(str(root / "s"))[...].tolist() == expect
    # a partial edge chunk never written before: the rest is the fill value
    e = zarrox.create_array(str(root / "e"), shape=(10,), chunks=(4,), dtype="f8", fill_value=2.5)
    with zarrox.transaction():
        e[9] = 1.0
        np.testing.assert_array_equal(e[8:], [2.5, 1.0])
    np.testing.assert_array_equal(e[...], [2.5] * 9 + [1.0])


def test_a_zero_dimensional_array(root: Path) -> None:
    z = zarrox.create_array(str(root / "z"), shape=(), dtype="f4", fill_value=1.5)
    with zarrox.transaction():
        z[...] = 4.0
        assert z[...] == 4.0
        assert not (root / "z" / "c").exists()  # nothing stored yet
    assert (root / "z" / "c").exists()
    assert z[...] == 4.0


def test_big_endian_and_structured_types_round_trip(root: Path) -> None:
    dt = np.dtype([("a", ">i4"), ("b", "<f8")])
    s = zarrox.create_array(str(root / "st"), shape=(9,), chunks=(4,), dtype=dt, zarr_format=2)
    ref = np.zeros(9, dtype=dt)
    ref["a"] = np.arange(9)
    ref["b"] = np.arange(9) / 4
    with zarrox.transaction():
        s[1:8] = ref[1:8]
        np.testing.assert_array_equal(s[...][1:8], ref[1:8])
    np.testing.assert_array_equal(s[1:8], ref[1:8])
    b = zarrox.create_array(str(root / "be"), shape=(9,), chunks=(4,), dtype=">f8", zarr_format=2)
    with zarrox.transaction():
        b[2:7] = np.arange(5, dtype=">f8")
    np.testing.assert_array_equal(b[2:7], np.arange(5.0))


def test_an_exception_in_the_block_discards_everything(root: Path) -> None:
    a = _array(root, "shards")
    a[...] = 3
    before = _snapshot(root)
    with pytest.raises(KeyError, match="stop"):
        with zarrox.transaction() as tx:
            a[...] = 4
            a[0, 0] = 5
            raise KeyError("stop")
    assert tx.aborted
    assert _snapshot(root) == before
    np.testing.assert_array_equal(a[...], 3)
    with pytest.raises(TransactionError, match="aborted"):
        tx.commit()


def test_the_explicit_form_stages_across_blocks_and_commits_once(root: Path) -> None:
    a = _array(root, "chunks")
    b = zarrox.create_array(str(root / "b"), shape=(4,), chunks=(2,), dtype="u1")
    tx = zarrox.Transaction()
    with tx.staging():
        a[0] = 1
    assert a[0, 0] == -1  # outside the block: the store's value
    with tx.staging():
        b[1:3] = 9
        assert a[0, 0] == 1
    tx.commit()
    assert tx.committed and not tx.open
    np.testing.assert_array_equal(a[0], 1)
    np.testing.assert_array_equal(b[...], [0, 9, 9, 0])
    with pytest.raises(TransactionError, match="committed"):
        with tx.staging():
            pass
    t2 = zarrox.Transaction()
    with t2.staging():
        a[...] = 0
    t2.abort()
    np.testing.assert_array_equal(a[0], 1)


@pytest.mark.parametrize("where", ["local", "python-served"])
def test_async_arrays_stage_and_see_staged_writes(root: Path, where: str) -> None:
    """Awaited natively (a local store) or on a worker thread (a store served from
    Python): the transaction of the awaiting context stages the writes either way."""
    store: dict[str, Any] | None = None if where == "local" else {}
    if store is None:
        a = _array(root, "shards")
    else:
        a = zarrox.create_array(
            store, shape=(30, 26), dtype="int32", fill_value=-1, chunks=(4, 4), shards=(8, 12)
        )

    async def main() -> tuple[Any, Any]:
        aa = zarrox.AsyncArray(a)
        with zarrox.transaction():
            await aa.setitem((slice(0, 8), slice(0, 12)), 6)
            inside = await aa.getitem((slice(6, 10), slice(10, 14)))
        return inside, await aa.getitem((slice(6, 10), slice(10, 14)))

    inside, after = asyncio.run(main())
    expect = np.full((4, 4), -1, dtype="int32")
    expect[:2, :2] = 6
    np.testing.assert_array_equal(inside, expect)
    np.testing.assert_array_equal(after, expect)
    if store is not None:
        assert zarrox.AsyncArray(a)._native() is False
        assert any(k.startswith("c/") for k in store)


def test_the_budget_aborts_a_transaction_that_stages_too_much(root: Path) -> None:
    a = _array(root, "chunks")
    a[...] = 0
    before = _snapshot(root)
    # a 7 x 5 chunk of int32 is staged as 35 * (4 + 1) bytes
    with pytest.raises(TransactionError, match="over the budget of 400"):
        with zarrox.transaction(budget=400):
            a[0:7, 0:5] = 1  # one chunk: 175 bytes
            a[0:7, 5:10] = 1  # two: 350
            a[0, 0] = 2  # the same chunk again: still 350
            a[7, 0] = 1  # a third: 525
    assert _snapshot(root) == before
    with zarrox.config.set({"transaction.bytes": 200}):
        tx = zarrox.Transaction()
        assert tx.budget == 200
    with pytest.raises(ValueError, match="transaction.bytes"):
        zarrox.config.set({"transaction.bytes": -1})


def test_shape_changes_are_refused_inside(root: Path) -> None:
    a = _array(root, "chunks")
    with zarrox.transaction():
        with pytest.raises(TransactionError, match="resize"):
            a.resize((40, 26))
        with pytest.raises(TransactionError, match="append"):
            a.append(np.zeros((1, 26), dtype="int32"))
    assert a.shape == (30, 26)


def test_a_store_served_from_python_commits_too() -> None:
    d: dict[str, Any] = {}
    a = zarrox.create_array(d, shape=(8,), chunks=(4,), dtype="i2")
    a[...] = 1
    with zarrox.transaction():
        a[2:6] = 7
        np.testing.assert_array_equal(a[...], [1, 1, 7, 7, 7, 7, 1, 1])
        # another array over the same dict is the same stored array
        np.testing.assert_array_equal(zarrox.open_array(d)[...], [1, 1, 7, 7, 7, 7, 1, 1])
    np.testing.assert_array_equal(zarrox.open_array(d)[...], [1, 1, 7, 7, 7, 7, 1, 1])


def test_commits_that_cannot_be_conditional_name_every_object(tmp_path: Path) -> None:
    """A zip archive has no generations: with io.conditional_writes "require", the merges
    are refused, and the error names each object that was not written."""
    path = tmp_path / "a.zip"
    store = zarrox.storage.ZipStore(str(path), mode="w")
    a = zarrox.create_array(store, shape=(8,), chunks=(4,), dtype="i2")
    a[...] = 1
    with zarrox.config.set({"io.conditional_writes": "require"}):
        with pytest.raises(WriteConflictError) as info:
            with zarrox.transaction():
                a[1] = 5
                a[6] = 5
    message = str(info.value)
    assert "2 stored object(s)" in message, message
    assert "c/0" in message and "c/1" in message, message
    np.testing.assert_array_equal(a[...], 1)


SHARD = (64, 64)
INNER = (8, 8)


def _shard_requests(log: list[dict[str, Any]], method: str) -> int:
    return sum(1 for e in log if e["method"] == method and e["path"].endswith("/t.zarr/c/0/0"))


def test_sixty_four_writes_into_one_shard_are_one_request(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    opts = proxied_bucket.object_store_options()
    url = proxied_bucket.url("t.zarr")
    a = zarrox.create_array(
        url, shape=SHARD, chunks=INNER, shards=SHARD, dtype="uint16", storage_options=opts
    )
    blocks = [(slice(i, i + 8), slice(j, j + 8)) for i in range(0, 64, 8) for j in range(0, 64, 8)]
    model = np.zeros(SHARD, dtype="uint16")
    s3_proxy.log(reset=True)
    with zarrox.transaction():
        for n, b in enumerate(blocks):
            a[b] = np.full((8, 8), n, dtype="uint16")  # one call each
            model[b] = n
    log = s3_proxy.log(reset=True)
    # covered whole: written once, not read
    assert (_shard_requests(log, "PUT"), _shard_requests(log, "GET")) == (1, 0), log
    np.testing.assert_array_equal(a[...], model)
    # all but one inner chunk (scalars: the general path), over what is stored: read once,
    # written once, on condition
    s3_proxy.log(reset=True)
    with zarrox.transaction():
        for n, b in enumerate(blocks[:-1]):
            a[b] = n + 100
            model[b] = n + 100
    log = s3_proxy.log(reset=True)
    assert (_shard_requests(log, "PUT"), _shard_requests(log, "GET")) == (1, 1), log
    put = next(e for e in log if e["method"] == "PUT" and e["path"].endswith("/c/0/0"))
    assert put["if_match"], put
    np.testing.assert_array_equal(a[...], model)
    # without a transaction: one read-modify-write per write
    for n, b in enumerate(blocks[:8]):
        a[b] = n
    log = s3_proxy.log(reset=True)
    assert _shard_requests(log, "PUT") == 8, log


def test_tensorstore_views_bound_to_a_transaction(root: Path) -> None:
    """``zarrox.open(spec, transaction=tx)`` and ``view.with_transaction(tx)``, as
    TensorStore's: the view's writes are staged in ``tx`` (its reads see them), other views
    see the store until ``tx.commit()``."""
    path = str(root / "ts")
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": path + "/"},
        "metadata": {
            "shape": [6, 4],
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 4]}},
            "data_type": "int16",
        },
        "create": True,
    }
    plain = zarrox.open(spec)
    tx = zarrox.Transaction()
    bound = zarrox.open({**spec, "create": False, "open": True}, transaction=tx)
    assert bound.transaction is tx and plain.transaction is None
    bound[1:3, :] = 5
    np.testing.assert_array_equal(bound[1:3, 0].read(), [5, 5])
    np.testing.assert_array_equal(plain.read(), np.zeros((6, 4)))  # not stored
    other = plain.with_transaction(tx)
    other[5, 3] = 7
    np.testing.assert_array_equal(other[5, 3].read(), 7)
    np.testing.assert_array_equal(plain[5, 3].read(), 0)
    tx.commit()
    expect = np.zeros((6, 4), dtype="int16")
    expect[1:3] = 5
    expect[5, 3] = 7
    np.testing.assert_array_equal(plain.read(), expect)
    with pytest.raises(TransactionError, match="committed"):
        bound[0, 0] = 1
    with pytest.raises(zarrox.errors.SpecError, match="zarrox.Transaction"):
        zarrox.open({**spec, "create": False, "open": True}, transaction="tx")


def test_async_with_commits_with_an_awaitable(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy, tmp_path: Path
) -> None:
    """``async with zarrox.transaction():`` commits with ``commit_async``: the engine
    completes the commit's writes while the event loop runs other tasks (here a ticker
    that counts while a 0.5 s delay holds the shard's PUT back)."""
    opts = proxied_bucket.object_store_options()
    url = proxied_bucket.url("async.zarr")
    a = zarrox.create_array(
        url, shape=(16, 16), chunks=(8, 8), shards=(16, 16), dtype="i4", storage_options=opts
    )
    local = zarrox.create_array({}, shape=(4,), chunks=(2,), dtype="i4")

    async def main() -> int:
        ticks = 0
        stop = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        task = asyncio.create_task(ticker())
        aa = zarrox.AsyncArray(a)
        slow = servers.FaultRule(
            "delay", path_regex=r"/async\.zarr/c/0/0", methods=("PUT",), delay_s=0.5, times=1
        )
        with s3_proxy.faults(slow):
            async with zarrox.transaction():
                await aa.setitem((slice(0, 8), slice(0, 16)), 1)
                a[8:16, :] = np.full((8, 16), 2, dtype="i4")
                local[1:3] = 5  # a store served from Python: written on a worker thread
            ticked = ticks
        stop.set()
        await task
        return ticked

    ticked = asyncio.run(main())
    assert ticked >= 20, ticked  # the loop ran during the 0.5 s the commit waited
    np.testing.assert_array_equal(a[:8], 1)
    np.testing.assert_array_equal(a[8:], 2)
    np.testing.assert_array_equal(local[...], [0, 5, 5, 0])

    async def aborted() -> None:
        async with zarrox.transaction():
            a[...] = 9
            raise KeyError("stop")

    with pytest.raises(KeyError):
        asyncio.run(aborted())
    np.testing.assert_array_equal(a[:8], 1)
