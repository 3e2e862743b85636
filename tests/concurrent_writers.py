"""Writers for tests/test_concurrent_writers.py: each runs in a process of its own (spawned),
and all of them write disjoint parts of the same chunks or shards of one array at once.

A case names the array's layout, the store (a local directory or a bucket on moto) and the
front door (zarrox's own API, or zarr-python with zarrox's codec pipeline). In round ``r``
writer ``w`` writes ``value(r, w)`` into each of its blocks, one write per block; the parent
reads the array between rounds (a barrier of the writers and the parent) and counts the
cells that do not hold what their writer wrote last.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

PIPELINE = "zarrox.ZarroxCodecPipeline"
SHAPE = (64, 64)
#: seconds a barrier waits for the others before the round is declared failed
BARRIER_TIMEOUT = 120.0


@dataclass(frozen=True)
class Case:
    #: "shards": 32x32 shards of 8x8 inner chunks, one inner chunk per write; "chunks":
    #: 32x32 zstd chunks, a quarter of a chunk (8 rows) per write
    layout: str
    zarr_format: int
    #: "own" (zarrox's API), "transaction" (zarrox's API, each round's writes of a writer
    #: staged in one ``zarrox.transaction()`` and committed together: every writer's commit
    #: merges into the same shards or chunks as the others') or "pipeline" (zarr-python on
    #: zarrox's pipeline)
    front: str
    #: "local" or "s3"; for the pipeline also "fsspec-s3" (an ``FsspecStore`` over s3fs,
    #: opened by URL with s3fs's storage options) and "fsspec-local" (over fsspec's local
    #: file system, by ``file://`` URL)
    store: str
    writers: int = 4

    @property
    def name(self) -> str:
        return f"{self.layout}-v{self.zarr_format}-{self.front}-{self.store}"


def value(round_: int, writer: int) -> int:
    return round_ * 64 + writer + 1


def blocks(case: Case, writer: int) -> list[tuple[slice, slice]]:
    """The blocks ``writer`` writes, one write each."""
    out = []
    if case.layout == "shards":
        for i in range(8):
            for j in range(8):
                if (i * 8 + j) % case.writers == writer:
                    out.append((slice(i * 8, i * 8 + 8), slice(j * 8, j * 8 + 8)))
        return out
    rows = 32 // case.writers
    for ci in range(2):
        for cj in range(2):
            r0 = ci * 32 + writer * rows
            out.append((slice(r0, r0 + rows), slice(cj * 32, cj * 32 + 32)))
    return out


def expected(case: Case, round_: int) -> np.ndarray:
    model = np.zeros(SHAPE, dtype="int32")
    for w in range(case.writers):
        for block in blocks(case, w):
            model[block] = value(round_, w)
    return model


def create(case: Case, where: dict[str, Any]) -> None:
    """Create the case's (empty) array at ``where`` with zarrox."""
    import zarrox

    kwargs: dict[str, Any] = {"shape": SHAPE, "dtype": "int32", "fill_value": 0}
    if case.layout == "shards":
        kwargs.update(chunks=(8, 8), shards=(32, 32))
    else:
        kwargs.update(chunks=(32, 32))
        if case.zarr_format == 2:
            kwargs["compressors"] = {"id": "zstd", "level": 1}
        else:
            kwargs["compressors"] = [{"name": "zstd", "configuration": {"level": 1}}]
    zarrox.create_array(
        where["url"],
        name="a",
        zarr_format=case.zarr_format,
        storage_options=where.get("options"),
        overwrite=True,
        **kwargs,
    )


def open_array(case: Case, where: dict[str, Any], mode: str = "r+") -> Any:
    """The case's array through its front door."""
    if case.front in ("own", "transaction"):
        import zarrox

        return zarrox.open_array(
            where["url"], path="a", mode=mode, storage_options=where.get("options")
        )
    import zarr

    zarr.config.set({"codec_pipeline.path": PIPELINE})
    if case.store == "local":
        store: Any = zarr.storage.LocalStore(where["url"], read_only=mode == "r")
    elif case.store == "fsspec-local":
        store = zarr.storage.FsspecStore.from_url(f"file://{where['url']}", read_only=mode == "r")
    elif case.store == "fsspec-s3":
        store = zarr.storage.FsspecStore.from_url(
            where["url"], storage_options=where["fsspec"], read_only=mode == "r"
        )
    else:
        from obstore.store import S3Store

        o = where["obstore"]
        store = zarr.storage.ObjectStore(
            S3Store(
                o["bucket"],
                prefix=o["prefix"],
                endpoint=o["endpoint"],
                access_key_id=o["key"],
                secret_access_key=o["secret"],
                region=o["region"],
                virtual_hosted_style_request=False,
                client_options={"allow_http": True},
            ),
            read_only=mode == "r",
        )
    return zarr.open_array(store, path="a", mode=mode, zarr_format=case.zarr_format)


def write_rounds(
    case: Case, where: dict[str, Any], writer: int, rounds: int, barrier: threading.Barrier
) -> None:
    """Process body: ``rounds`` rounds of this writer's blocks, in step with the others."""
    import warnings

    warnings.simplefilter("ignore")
    for key, val in where.get("env", {}).items():
        os.environ[key] = val
    arr = open_array(case, where)
    mine = blocks(case, writer)
    for r in range(rounds):
        barrier.wait(BARRIER_TIMEOUT)
        with _round_scope(case):
            for block in mine:
                arr[block] = np.full(
                    (block[0].stop - block[0].start, block[1].stop - block[1].start),
                    value(r, writer),
                    dtype="int32",
                )
        barrier.wait(BARRIER_TIMEOUT)


def _round_scope(case: Case) -> Any:
    """What a writer's round of writes runs in: a transaction for the "transaction" front
    door (committed when the round's writes are staged), else nothing."""
    if case.front == "transaction":
        import zarrox

        return zarrox.transaction()
    import contextlib

    return contextlib.nullcontext()


def set_attributes(url: str, options: dict[str, Any] | None, writer: int, n: int) -> None:
    """Process body: ``n`` attributes of this writer's own, one update each."""
    import zarrox

    arr = zarrox.open_array(url, path="a", mode="r+", storage_options=options)
    for i in range(n):
        arr.attrs[f"w{writer}-{i}"] = [writer, i]


def append_rows(url: str, options: dict[str, Any] | None, writer: int, n: int) -> None:
    """Process body: ``n`` appends of two rows holding the writer's number."""
    import zarrox

    arr = zarrox.open_array(url, path="a", mode="r+", storage_options=options)
    for _ in range(n):
        arr.append(np.full((2, 8), writer + 1, dtype="int32"))


def hold_directory_lock(directory: str, ready: Any) -> None:
    """Process body: take the exclusive lock conditional writers take on ``directory`` (as
    a writer inside its check-and-rename would), say so, and hold it until killed."""
    import fcntl
    import time

    fd = os.open(directory, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    ready.set()
    while True:
        time.sleep(1)


def rewrite_whole(url: str, options: dict[str, Any] | None, started: Any, stop: Any) -> None:
    """Process body: write the whole array again and again, each time one value, until
    ``stop`` is set."""
    import zarrox

    arr = zarrox.open_array(url, path="a", mode="r+", storage_options=options)
    started.set()
    i = 0
    while not stop.is_set():
        i += 1
        arr[...] = np.full(arr.shape, i, dtype="int32")
