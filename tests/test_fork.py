"""fork() while other threads use zarrox: the child must neither hang nor see half-updated
state (issue 17: a child used to hang on a memory store's lock within a few dozen forks, and
on the worker pool's lock about once in 3,500). ZARROX_FORK_STRESS sets the number of forks
(default 600; RELIABILITY.md says how to run it for hours)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import zarrox
from zarrox.storage import MemoryStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fork() is POSIX")

FORKS = int(os.environ.get("ZARROX_FORK_STRESS", "600"))


def _wait(pid: int, timeout: float) -> int | None:
    """The child's exit status, or None if it is still running after ``timeout``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.001)
    return None


def test_fork_while_other_threads_read_and_write(tmp_path):
    data = np.arange(64 * 64, dtype="int32").reshape(64, 64)
    mem = zarrox.create_array(MemoryStore(), shape=(64, 64), chunks=(8, 8), dtype="int32")
    loc = zarrox.create_array(
        str(tmp_path / "l.zarr"), shape=(64, 64), chunks=(8, 8), shards=(32, 32), dtype="int32"
    )
    mem[:] = data
    loc[:] = data
    stop = threading.Event()
    failures: list[BaseException] = []

    def work(a: zarrox.Array) -> None:
        try:
            while not stop.is_set():
                np.testing.assert_array_equal(a[8:], data[8:])
                a[:8] = data[:8]  # rewrites the first row of chunks: the store's write lock
        except BaseException as e:  # noqa: BLE001 - reported by the test
            failures.append(e)

    threads = [threading.Thread(target=work, args=(a,), daemon=True) for a in (mem, loc, mem)]
    for t in threads:
        t.start()
    hung = bad = 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a threaded process
            for _ in range(FORKS):
                pid = os.fork()
                if pid == 0:  # the child: read both arrays, exit at once
                    signal.alarm(30)
                    try:
                        ok = bool((mem[:] == data).all() and (loc[:] == data).all())
                        mem[0, 0] = 5
                        ok = ok and int(mem[0, 0]) == 5
                    except BaseException:  # noqa: BLE001 - any failure is a non-zero exit
                        ok = False
                    os._exit(0 if ok else 1)
                status = _wait(pid, 30.0)
                if status is None:
                    hung += 1
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                elif status != 0:
                    bad += 1
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    assert not failures, failures[:3]
    assert (hung, bad) == (0, 0), f"{hung} children hung and {bad} failed in {FORKS} forks"


def test_threads_read_and_write_at_once(tmp_path):
    """Several threads in zarrox calls at once: the decoding threads steal each other's work
    (a panic once came from an executor entered twice on one thread)."""
    data = np.arange(96 * 96, dtype="float64").reshape(96, 96)
    arrays = [
        zarrox.create_array(
            str(tmp_path / f"{i}.zarr"), shape=(96, 96), chunks=(8, 8), dtype="float64", **kw
        )
        for i, kw in enumerate([{}, {"shards": (32, 32)}, {"compressors": None}])
    ]
    for a in arrays:
        a[:] = data
    failures: list[BaseException] = []

    def work(a: zarrox.Array, seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(60):
                r, c = rng.integers(0, 80, 2)
                np.testing.assert_array_equal(a[r : r + 16, c:], data[r : r + 16, c:])
                a[r : r + 3] = data[r : r + 3]
        except BaseException as e:  # noqa: BLE001 - reported by the test
            failures.append(e)

    threads = [threading.Thread(target=work, args=(arrays[i % 3], i)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failures, failures[:3]
