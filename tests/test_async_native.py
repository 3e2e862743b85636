"""Awaitables the engine completes (issue #42, item 3): ``AsyncArray``'s reads and writes,
``zarrox.api.asynchronous`` and zarr-python's pipeline await futures that the Rust engine
resolves from its own runtime, with no Python thread per await.

Checked here: results equal the blocking API's (local files, S3 on moto); no Python thread is
started while hundreds of awaits are in flight and ``asyncio.to_thread`` is never called;
cancelling a task awaiting a read of a slow store cancels it, keeps the loop responsive and
leaves later reads working; a thousand awaits in flight; errors of the blocking API's types.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import servers
import zarrox
import zarrox.api.asynchronous as za
from zarrox import AsyncArray
from zarrox.errors import BoundsCheckError, ReadOnlyError, StoreError

CHUNK_GET = r"/c/"


@pytest.fixture
def no_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """``asyncio.to_thread`` fails: nothing under test may hand an await to a thread."""

    async def refuse(func: Any, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"asyncio.to_thread({func!r}) was called")

    monkeypatch.setattr(asyncio, "to_thread", refuse)


def _reference(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype == "str":
        return np.array([f"v{i}" * (i % 4) for i in range(n)], dtype=object).reshape(shape)
    return (np.arange(n) % 251).astype(dtype).reshape(shape)


SELECTIONS: list[tuple[str, Any]] = [
    ("getitem", (slice(3, 17), slice(None, None, 3))),
    ("getitem", (5, 7)),
    ("getitem", Ellipsis),
    ("getitem", ([1, 4, 19], slice(2, 9))),
    ("get_basic_selection", (slice(None), 4)),
    ("get_orthogonal_selection", ([0, 7, 3], [2, 2, 11])),
    ("get_coordinate_selection", ([0, 7, 19], [2, 9, 11])),
    ("get_block_selection", (1, slice(0, 2))),
]


async def _compare_reads(sync: zarrox.Array, a: AsyncArray) -> None:
    for method, sel in SELECTIONS:
        want = sync[sel] if method == "getitem" else getattr(sync, method)(sel)
        got = await getattr(a, method)(sel)
        assert type(got) is type(want), (method, sel)
        np.testing.assert_array_equal(got, want, err_msg=f"{method}{sel}")
    mask = np.zeros(sync.shape, dtype=bool)
    mask[2, 3] = mask[17, 0] = True
    np.testing.assert_array_equal(await a.get_mask_selection(mask), sync.get_mask_selection(mask))
    np.testing.assert_array_equal(await a.vindex.getitem(mask), sync.vindex[mask])
    np.testing.assert_array_equal(await a.oindex.getitem(([1, 2], 3)), sync.oindex[[1, 2], 3])


async def _writes(a: AsyncArray, ref: np.ndarray) -> None:
    """The same writes to ``a`` (awaited) and ``ref``."""
    value = ref[0, 0]
    await a.setitem((slice(2, 9), slice(4, 6)), value)
    ref[2:9, 4:6] = value
    block = ref[10:14, 1:13][::-1].copy()
    await a.set_basic_selection((slice(10, 14), slice(1, 13)), block)
    ref[10:14, 1:13] = block
    await a.set_orthogonal_selection(([0, 19], [3, 5]), ref[0, 0])
    ref[np.ix_([0, 19], [3, 5])] = ref[0, 0]
    await a.vindex.setitem(([1, 2], [3, 4]), ref[5, 5])
    ref[[1, 2], [3, 4]] = ref[5, 5]


@pytest.mark.parametrize("dtype", ["int32", "float64", "str"])
@pytest.mark.parametrize("layout", ["chunks", "sharded"])
def test_local_results_equal_the_blocking_api(
    tmp_path: Path, no_threads: None, dtype: str, layout: str
) -> None:
    ref = _reference((20, 15), dtype)
    kwargs: dict[str, Any] = {"chunks": (4, 5)}
    if layout == "sharded":
        kwargs = {"chunks": (2, 5), "shards": (4, 15)}
    sync = zarrox.create_array(
        str(tmp_path / "a.zarr"),
        shape=ref.shape,
        dtype=ref.dtype if dtype != "str" else str,
        **kwargs,
    )
    sync[...] = ref

    async def main() -> None:
        a = AsyncArray(sync)
        await _compare_reads(sync, a)
        expected = ref.copy()
        await _writes(a, expected)
        np.testing.assert_array_equal(sync[...], expected)

    asyncio.run(main())


def test_reads_into_out_and_api_functions(tmp_path: Path) -> None:
    ref = _reference((12, 8), "int16")
    url = str(tmp_path / "b.zarr")

    async def main() -> None:
        a = await za.array(ref, store=url, chunks=(5, 3))
        assert isinstance(a, AsyncArray)
        np.testing.assert_array_equal(await za.load(url), ref)
        out = np.zeros((12, 8), dtype="int16")
        assert await a.get_basic_selection(Ellipsis, out=out) is out
        np.testing.assert_array_equal(out, ref)
        fortran = np.zeros((12, 8), dtype="int16", order="F")
        await a.get_basic_selection(Ellipsis, out=fortran)
        np.testing.assert_array_equal(fortran, ref)

    asyncio.run(main())
    np.testing.assert_array_equal(zarrox.open_array(url)[...], ref)


def _s3_array(bucket: servers.S3Bucket, name: str, ref: np.ndarray, **kw: Any) -> zarrox.Array:
    opts = bucket.object_store_options()
    url = bucket.url(f"{name}.zarr")
    a = zarrox.create_array(url, shape=ref.shape, dtype=ref.dtype, storage_options=opts, **kw)
    a[...] = ref
    return zarrox.open_array(url, mode="r+", storage_options=opts)


@pytest.mark.parametrize("layout", ["chunks", "sharded"])
def test_s3_results_equal_the_blocking_api(
    s3_bucket: servers.S3Bucket, no_threads: None, layout: str
) -> None:
    ref = _reference((20, 15), "int32")
    kw: dict[str, Any] = {"chunks": (4, 5)}
    if layout == "sharded":
        kw = {"chunks": (2, 5), "shards": (4, 15)}
    sync = _s3_array(s3_bucket, layout, ref, **kw)

    async def main() -> None:
        a = AsyncArray(sync)
        await _compare_reads(sync, a)
        expected = ref.copy()
        await _writes(a, expected)
        np.testing.assert_array_equal(sync[...], expected)

    asyncio.run(main())


async def _count_threads(counts: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        counts.append(threading.active_count())
        await asyncio.sleep(0.001)


def test_no_python_thread_per_await(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy, no_threads: None
) -> None:
    ref = _reference((256, 64), "float32")
    sync = _s3_array(proxied_bucket, "threads", ref, chunks=(1, 64))
    before = threading.active_count()

    async def main() -> list[int]:
        a = AsyncArray(sync)
        counts: list[int] = []
        stop = asyncio.Event()
        sampler = asyncio.create_task(_count_threads(counts, stop))
        with s3_proxy.faults(latency_ms=20):
            rows = await asyncio.gather(*(a.getitem(i) for i in range(256)))
        stop.set()
        await sampler
        np.testing.assert_array_equal(np.stack(rows), ref)
        return counts

    counts = asyncio.run(main())
    assert len(counts) > 5
    assert max(counts) == before, "a Python thread was started while the awaits were in flight"


def test_cancel_a_read_of_a_slow_store(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    ref = _reference((8, 8), "int64")
    sync = _s3_array(proxied_bucket, "cancel", ref, chunks=(4, 4))
    slow = servers.FaultRule("delay", path_regex=CHUNK_GET, methods=("GET",), delay_s=5.0)

    async def main() -> None:
        a = AsyncArray(sync)
        ticks: list[float] = []
        stop = asyncio.Event()

        async def tick() -> None:
            while not stop.is_set():
                ticks.append(time.perf_counter())
                await asyncio.sleep(0.005)

        ticker = asyncio.create_task(tick())
        with s3_proxy.faults(slow):
            task = asyncio.create_task(a.getitem(Ellipsis))
            await asyncio.sleep(0.3)
            assert not task.done()
            started = time.perf_counter()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert time.perf_counter() - started < 1.0, "the cancellation waited for the store"
            assert task.cancelled()
        stop.set()
        await ticker
        gaps = np.diff(ticks)
        assert gaps.max() < 0.25, f"the event loop stalled for {gaps.max():.3f} s"
        # later reads (and writes) work, on the same array
        np.testing.assert_array_equal(await a.getitem(Ellipsis), ref)
        await a.setitem((0, 0), 99)
        assert await a.getitem((0, 0)) == 99

    asyncio.run(main())


def test_a_thousand_awaits_in_flight(tmp_path: Path, no_threads: None) -> None:
    n, row = 1000, 8192  # 1,000 one-chunk reads of 64 KiB
    ref = np.arange(n * row, dtype="int64").reshape(n, row) % 1009
    sync = zarrox.create_array(
        str(tmp_path / "k.zarr"), shape=ref.shape, dtype="int64", chunks=(1, row)
    )
    sync[...] = ref
    before = threading.active_count()
    a = AsyncArray(sync)
    asyncio.run(a.getitem(0))  # pools and runtime started
    base = _peak_reset()

    async def main() -> list[np.ndarray]:
        return await asyncio.gather(*(a.getitem(i) for i in range(n)))

    rows = asyncio.run(main())
    if base is not None:
        grown = _peak() - base
        results = n * row * 8
        # the results, plus what the worker threads decode at a time and the awaitables
        assert grown < results + 48 * 2**20, f"peak RSS grew {grown / 2**20:.0f} MiB"
    assert threading.active_count() == before
    np.testing.assert_array_equal(np.stack(rows), ref)


def _peak() -> int:
    """This process's peak resident memory (VmHWM), bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _peak_reset() -> int | None:
    """Reset the peak to the current resident memory (Linux: ``clear_refs`` 5) and return
    it; None where that cannot be done."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _peak()
    except OSError:
        return None


def test_a_thousand_awaits_on_s3(s3_bucket: servers.S3Bucket, no_threads: None) -> None:
    ref = _reference((1000, 16), "int32")
    sync = _s3_array(s3_bucket, "many", ref, chunks=(1, 16))

    async def main() -> list[np.ndarray]:
        a = AsyncArray(sync)
        return await asyncio.gather(*(a.getitem(i) for i in range(1000)))

    np.testing.assert_array_equal(np.stack(asyncio.run(main())), ref)


def test_errors_are_the_blocking_apis(
    tmp_path: Path, proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy
) -> None:
    url = str(tmp_path / "e.zarr")
    sync = zarrox.create_array(url, shape=(6, 6), dtype="u1", chunks=(3, 3))
    sync[...] = 1
    read_only = zarrox.open_array(url, mode="r")
    ref = _reference((6, 6), "u1")
    remote = _s3_array(proxied_bucket, "errors", ref, chunks=(3, 3))
    denied = servers.FaultRule("status", status=403, path_regex=CHUNK_GET, methods=("GET",))

    def blocking_error(func: Any) -> type[BaseException]:
        with pytest.raises(Exception) as info:
            func()
        return info.type

    async def main() -> None:
        a, r, s = AsyncArray(sync), AsyncArray(read_only), AsyncArray(remote)
        want = blocking_error(lambda: sync[7, 0])
        assert want is BoundsCheckError or issubclass(want, IndexError)
        with pytest.raises(want):
            await a.getitem((7, 0))
        with pytest.raises(blocking_error(lambda: read_only.__setitem__((0, 0), 3))):
            await r.setitem((0, 0), 3)
        with pytest.raises(ReadOnlyError):
            await r.set_basic_selection((0, 0), 3)
        with pytest.raises(blocking_error(lambda: sync.__setitem__((0, 0), "x"))):
            await a.setitem((0, 0), "x")
        with s3_proxy.faults(denied):
            want = blocking_error(lambda: remote[...])
            assert issubclass(want, StoreError)
            with pytest.raises(want):
                await s.getitem(Ellipsis)
        # a corrupt chunk: the blocking API's error type, the chunk named
        (tmp_path / "e.zarr" / "c" / "1" / "1").write_bytes(b"not zstd")
        want = blocking_error(lambda: sync[...])
        with pytest.raises(want, match="c/1/1"):
            await a.getitem(Ellipsis)

    asyncio.run(main())


async def _pipeline_round_trip(store: Any, ref: np.ndarray) -> None:
    import zarr

    with zarr.config.set(
        {"codec_pipeline.path": "zarrox.ZarroxCodecPipeline", "codec_pipeline.strict": True}
    ):
        a = await zarr.api.asynchronous.create_array(
            store, name="p", shape=ref.shape, dtype=ref.dtype, chunks=(256, 64)
        )
        assert type(a.codec_pipeline).__name__ == "ZarroxCodecPipeline"
        await a.setitem(Ellipsis, ref)
        parts = [a.getitem(slice(i, i + 512)) for i in range(0, ref.shape[0], 512)]
        np.testing.assert_array_equal(np.concatenate(await asyncio.gather(*parts)), ref)


def test_zarr_python_pipeline_awaits_the_engine_on_s3(
    s3_bucket: servers.S3Bucket, no_threads: None
) -> None:
    pytest.importorskip("zarr")
    ref = _reference((2048, 64), "uint16")
    asyncio.run(_pipeline_round_trip(s3_bucket.zarr_obstore("pipe"), ref))


def test_zarr_python_pipeline_awaits_the_engine_on_local_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """zarr-python's LocalStore reads and writes metadata on threads itself; the pipeline's
    chunk batches (512 KiB each here: too large to run inline) are awaited, not threaded."""
    pytest.importorskip("zarr")
    from zarr.storage import LocalStore

    from zarrox import _core

    real = asyncio.to_thread
    threaded: list[Any] = []

    async def watching(func: Any, *args: Any, **kwargs: Any) -> Any:
        rust = _core.ChunkCodec | _core.ReadSession | _core.WriteBatch
        if isinstance(getattr(func, "__self__", None), rust):
            threaded.append(func)
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", watching)
    ref = _reference((2048, 64), "uint16")
    asyncio.run(_pipeline_round_trip(LocalStore(tmp_path / "pipe"), ref))
    assert threaded == []


# A process that exits right after its last await: the completer thread may still be inside
# `call_soon_threadsafe` (it yields the GIL between bytecodes); taking the GIL back while the
# interpreter finalizes ended it with pthread_exit and glibc aborted ("FATAL: exception not
# rethrown", about one exit in six before the fix).
_EXIT_RIGHT_AFTER = """
import asyncio, zarrox
a = zarrox.create_array(zarrox.MemoryStore(), shape=(4,), dtype="i2")
async def main():
    aa = zarrox.AsyncArray(a)
    await aa.setitem(slice(None), 7)
    return await aa.getitem(slice(1, 3))
print(asyncio.run(main()).tolist())
"""

# An `atexit` function (registered before zarrox's, so it runs after it) that awaits reads
# and writes: they complete in place rather than wait for a completer that has stopped.
_AWAIT_AT_EXIT = """
import asyncio, atexit, zarrox
def at_exit():
    async def main():
        aa = zarrox.AsyncArray(a)
        await aa.setitem(slice(0, 2), 5)
        return await aa.getitem(slice(None))
    print("at exit", asyncio.run(main()).tolist(), flush=True)
atexit.register(at_exit)
a = zarrox.create_array(zarrox.MemoryStore(), shape=(4,), dtype="i2", fill_value=1)
async def first():
    return await zarrox.AsyncArray(a).getitem(slice(None))
print("first", asyncio.run(first()).tolist(), flush=True)
"""


def _run_children(code: str, n: int, parallel: int = 4) -> list[subprocess.CompletedProcess[str]]:
    """Run ``code`` in ``n`` fresh interpreters, ``parallel`` at a time (killed after 120 s)."""
    done: list[subprocess.CompletedProcess[str]] = []
    for start in range(0, n, parallel):
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(min(parallel, n - start))
        ]
        for p in procs:
            try:
                out, err = p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            done.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    return done


def test_the_interpreter_exits_cleanly_right_after_an_await() -> None:
    runs = _run_children(_EXIT_RIGHT_AFTER, 40)
    bad = [(r.returncode, r.stderr.strip()[-300:]) for r in runs if r.returncode != 0]
    assert not bad, f"{len(bad)} of {len(runs)} exits failed: {bad[:3]}"
    assert {r.stdout for r in runs} == {"[7, 7]\n"}


def test_awaits_in_an_atexit_function_complete() -> None:
    (run,) = _run_children(_AWAIT_AT_EXIT, 1)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["first [1, 1, 1, 1]", "at exit [5, 5, 1, 1]"]


# -- metadata operations awaited without threads (zarrox.storage.replay) -------------------------


def test_metadata_operations_on_s3_take_no_thread(
    proxied_bucket: servers.S3Bucket, s3_proxy: servers.FaultProxy, no_threads: None
) -> None:
    """Opening, creating and listing nodes and updating attributes on an object store run on
    the event loop, each request awaited through the engine: every metadata document is
    written once, and the results equal the blocking API's."""
    url, opts = proxied_bucket.url("meta.zarr"), proxied_bucket.object_store_options()
    s3_proxy.log(reset=True)
    counts: list[int] = []
    before = threading.active_count()

    async def main() -> None:
        stop = asyncio.Event()
        sampler = asyncio.create_task(_count_threads(counts, stop))
        root = await za.open_group(url, mode="w", storage_options=opts, attributes={"a": 1})
        x = await root.create_array("x", shape=(10,), chunks=(5,), dtype="i4", fill_value=7)
        await x.setitem(slice(0, 5), np.arange(5))
        sub = await root.create_group("sub", attributes={"s": True})
        await sub.create_array("y", shape=(2, 3), dtype="f8")
        await root.update_attributes({"b": 2})
        await x.update_attributes({"units": "m"})
        assert [k async for k in root.keys()] == ["sub", "x"]
        assert [k async for k in root.array_keys()] == ["x"]
        assert await root.contains("sub") and not await root.contains("nope")
        assert sorted([n async for n, _ in root.members(max_depth=None)]) == ["sub", "sub/y", "x"]
        got = await root.getitem("x")
        np.testing.assert_array_equal(
            await got.getitem(slice(None)), [0, 1, 2, 3, 4, 7, 7, 7, 7, 7]
        )
        # many opens in flight at once
        opened = await asyncio.gather(
            *(za.open_array(url, path="sub/y", mode="r", storage_options=opts) for _ in range(200))
        )
        assert {a.shape for a in opened} == {(2, 3)}
        await root.delitem("sub")
        assert not await root.contains("sub")
        with pytest.raises(zarrox.errors.ArrayNotFoundError):
            await za.open_array(url, path="missing", mode="r", storage_options=opts)
        stop.set()
        await sampler

    asyncio.run(main())
    assert max(counts) == before, "a Python thread was started"
    root = zarrox.open_group(url, mode="r", storage_options=opts)
    assert dict(root.attrs) == {"a": 1, "b": 2}
    assert dict(root["x"].attrs) == {"units": "m"}
    assert "sub" not in root
    puts: dict[str, int] = {}
    for e in s3_proxy.log():
        if e["method"] == "PUT" and e["path"].endswith("zarr.json"):
            key = e["path"].split("/meta.zarr/", 1)[1]
            puts[key] = puts.get(key, 0) + 1
    # created, then its attributes updated: two documents each; the others once
    assert puts == {"zarr.json": 2, "x/zarr.json": 2, "sub/zarr.json": 1, "sub/y/zarr.json": 1}


@pytest.mark.parametrize("where", ["local", "s3"])
def test_store_given_by_keyword(where: str, tmp_path: Path, s3_bucket: servers.S3Bucket) -> None:
    """zarr-python's awaitable functions take ``store=`` by keyword (the common spelling):
    the store is found among the keywords, on either path (worker thread, or the event loop
    for an object store), and the call gets it as the synchronous one would."""
    if where == "local":
        url, opts = str(tmp_path / "kw.zarr"), {}
    else:
        url, opts = s3_bucket.url("kw.zarr"), {"storage_options": s3_bucket.object_store_options()}

    async def main() -> Any:
        root = await za.open_group(store=url, mode="w", attributes={"k": 1}, **opts)
        await za.create_array(store=url, name="a", shape=(4,), dtype="i2", fill_value=3, **opts)
        group = await za.open_group(store=url, mode="r", **opts)
        array = await za.open_array(store=url, path="a", mode="r", **opts)
        return root, dict(group.attrs), await array.getitem(slice(None))

    root, attrs, values = asyncio.run(main())
    assert isinstance(root, zarrox.AsyncGroup)
    assert attrs == {"k": 1}
    np.testing.assert_array_equal(values, [3, 3, 3, 3])


def test_metadata_operation_moving_data_finishes_on_a_thread(
    s3_bucket: servers.S3Bucket,
) -> None:
    """An operation that also moves chunk data (``create_array(data=...)``) goes on in a
    worker thread from where the event loop left it: nothing is done twice."""
    url, opts = s3_bucket.url("moving.zarr"), s3_bucket.object_store_options()

    async def main() -> Any:
        return await za.create_array(
            url, name="d", data=np.arange(12).reshape(3, 4), chunks=(2, 2), storage_options=opts
        )

    created = asyncio.run(main())
    np.testing.assert_array_equal(created.sync[...], np.arange(12).reshape(3, 4))
    with pytest.raises(zarrox.errors.ContainsArrayError):  # it exists: not overwritten
        asyncio.run(main())


def test_replay_answers_from_its_log_and_refuses_another_path() -> None:
    from zarrox.storage.replay import Entry, NeedIO, Replay

    store = zarrox.storage.MemoryStore()
    replay = Replay()
    with pytest.raises(NeedIO) as need:
        replay.call(store, "get", ("k",))
    entry = need.value.entry
    assert (entry.op, entry.args) == ("get", ("k",))
    replay.entries.append(Entry(store, "get", ("k",), result=b"v"))
    assert replay.call(store, "get", ("k",)) == b"v"
    replay.position = 0
    with pytest.raises(RuntimeError, match="another path"):
        replay.call(store, "get", ("other",))
    replay.position = 0
    replay.entries[0].error = KeyError("boom")
    with pytest.raises(KeyError, match="boom"):
        replay.call(store, "get", ("k",))
    # NeedIO is no Exception: handlers of zarrox's (`except Exception`) let it through
    assert not issubclass(NeedIO, Exception)
