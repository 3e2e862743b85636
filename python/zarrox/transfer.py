"""Moving values between arrays in blocks: what ``from_array``, ``copy``, ``convert`` and
``zarrox copy`` use to fill a new array from another (a zarrox or zarr-python array, or any
array-like) with bounded memory.

A block is a whole number of the destination's stored objects (shards, or chunks when it is
not sharded), grown up to about :data:`BLOCK_BYTES`, so that each read and each write is one
call into the Rust core over many chunks (decoded and encoded in parallel) and no stored object
is written twice. Read from an array, a block stacks whole objects along the first dimension
(each object one contiguous run of the block: decoded straight into it, encoded straight out of
it); values already in memory are taken in blocks grown along the last dimensions first (the
longest runs of them).

Reading and writing overlap: a reader thread reads (fetches and decodes) the next block while
the calling thread writes (encodes and stores) the current one, both in the Rust core with the
GIL released, so the cores do not idle in turn. The reader runs at most one block ahead, and
for a zarrox source it decodes into two buffers used in turn, so memory stays at two blocks and
no block's pages are faulted in afresh. A failing read raises its exception in the caller, a
failing write stops the reader; either way the thread is joined before ``copy_values``
returns or raises.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

#: the size a block of values grows to (unless one stored object is larger)
BLOCK_BYTES = 64 * 1024 * 1024

#: called after each block with (elements copied so far, elements in all)
Progress = Callable[[int, int], None]


def block_shape(
    shape: Sequence[int],
    grid: Sequence[int],
    itemsize: int,
    target: int = BLOCK_BYTES,
    *,
    stack: bool = False,
) -> tuple[int, ...]:
    """A multiple of ``grid`` (the destination's stored object shape), grown along the last
    dimensions first while a block stays within ``target`` bytes, never past ``shape``.

    ``stack``: grown along the first dimensions first instead, so that the stored objects of
    a block are stacked along the first dimension and each is one contiguous run of the
    block's values (read straight into it and written straight out of it, nothing gathered
    or scattered)."""
    block = [max(1, int(g)) for g in grid]
    for d in range(len(block)) if stack else reversed(range(len(block))):
        nbytes = math.prod(block) * max(itemsize, 1)
        factor = max(1, target // max(nbytes, 1))
        cells = -(-int(shape[d]) // block[d]) if shape[d] else 1
        block[d] *= min(factor, cells)
        if factor < cells:
            break  # this dimension is not whole: the dimensions not grown yet stay one object
    return tuple(block)


def regions(shape: Sequence[int], step: Sequence[int]) -> Iterator[tuple[slice, ...]]:
    """The blocks of ``step`` that tile ``shape``, in C order (the last ones clipped)."""
    axes = [
        [slice(i, min(i + s, n)) for i in range(0, n, s)] for n, s in zip(shape, step, strict=True)
    ]
    return itertools.product(*axes)


def write_grid(array: Any) -> tuple[int, ...]:
    """The shape of one stored object of ``array``: its shards, else its chunks."""
    shards = getattr(array, "shards", None)
    return tuple(shards) if shards else tuple(array.chunks)


def _rectilinear_sizes(array: Any) -> tuple[tuple[int, ...], ...] | None:
    """Per dimension, the data sizes of the stored objects of a zarrox array whose grid is
    rectilinear; None for any other array."""
    if getattr(array, "_rectilinear", None) is None:
        return None
    return tuple(array.write_chunk_sizes)


def copy_values(
    source: Any,
    dest: Any,
    *,
    progress: Progress | None = None,
    target: int = BLOCK_BYTES,
) -> int:
    """Copy every value of ``source`` (an array or array-like of ``dest``'s shape) into
    ``dest`` block by block; returns the number of elements copied. Unless ``source`` is
    already in memory, the next block is read on a thread of its own while the current one
    is written."""
    shape = tuple(dest.shape)
    if tuple(np.shape(source) if not hasattr(source, "shape") else source.shape) != shape:
        raise ValueError(f"source of shape {source.shape} does not fit {shape}")
    total = math.prod(shape)
    if total == 0:
        if progress is not None:
            progress(0, 0)
        return 0
    if not shape:  # 0-d
        dest[...] = source[...]
        if progress is not None:
            progress(1, 1)
        return 1
    itemsize = max(np.dtype(dest.dtype).itemsize, 1) if dest.dtype.kind not in "OT" else 16
    sizes = _rectilinear_sizes(dest)
    if sizes is not None:
        # Chunks differ in shape: one stored object (chunk or shard) at a time.
        blocks: Iterator[tuple[slice, ...]] = itertools.product(
            *(
                [slice(int(a), int(a) + n) for a, n in zip(np.cumsum((0, *s)), s, strict=False)]
                for s in sizes
            )
        )
    else:
        # Values read from an array go into a new buffer anyway: stacked objects are each
        # decoded into it and encoded out of it in one piece. Values in memory are taken
        # as they are: rows along the last dimensions are the longest runs of them.
        stack_objects = not isinstance(source, np.ndarray)
        step = block_shape(shape, write_grid(dest), itemsize, target, stack=stack_objects)
        blocks = regions(shape, step)
    done = 0
    with contextlib.ExitStack() as stack:
        pairs: Iterable[tuple[tuple[slice, ...], np.ndarray]]
        if _overlaps(source, dest):
            pairs = stack.enter_context(_ReadAhead(source, blocks))
        else:
            pairs = ((region, np.asarray(source[region])) for region in blocks)
        for region, values in pairs:
            dest[region] = values
            done += math.prod(s.stop - s.start for s in region)
            if progress is not None:
                progress(done, total)
    return done


class ValueBytes:
    """Bytes of values copied so far (by :meth:`copy`, or counted with :meth:`skip`), told to
    ``report(done, total)``: the progress of ``copy``, ``copy_node`` and ``convert``."""

    def __init__(self, report: Progress | None, total: int) -> None:
        self._report = report
        self.total = total
        self.done = 0

    def at(self, done: int) -> None:
        self.done = done
        if self._report is not None:
            self._report(done, self.total)

    def skip(self, array: Any) -> None:
        """Count the values of ``array`` as done without copying them."""
        self.at(self.done + array.nbytes)

    def copy(self, source: Any, dest: Any) -> None:
        """:func:`copy_values` from the array ``source`` to ``dest``, telling the bytes."""
        start, itemsize = self.done, source.nbytes // max(source.size, 1)
        copy_values(source, dest, progress=lambda n, _: self.at(start + n * itemsize))


def _overlaps(source: Any, dest: Any) -> bool:
    """Whether ``source`` is read on a thread of its own while ``dest`` is written: not for
    values already in memory (nothing to read), nor when both are zarrox arrays served by
    stores in Python (they may be one store object, such as a user's mapping, which need not
    bear a read and a write from two threads at once)."""
    if isinstance(source, np.ndarray):
        return False
    return not (_in_python(source) and _in_python(dest))


def _in_python(array: Any) -> bool:
    """Whether ``array`` is a zarrox array whose store Python serves (Rust does not)."""
    handle = getattr(array, "_handle", None)
    return handle is not None and not getattr(handle, "in_rust", True)


class _Stop(Exception):
    """The consumer stopped (it failed, or it is done): the reader ends."""


#: how long a blocked thread waits before it looks again whether the other one is still there
_POLL_S = 0.05

_Item = tuple[tuple[slice, ...], np.ndarray]
_T = TypeVar("_T")


class _ReadAhead:
    """(region, values) for each block of ``blocks``, read by a thread of its own one block
    ahead of the consumer (a context manager: leaving it stops and joins the thread).

    For a zarrox array of fixed-size values, the values are decoded into two buffers in
    turn: a buffer goes back to the reader when the consumer asks for the next block, so the
    consumer must be done with the previous values by then (it is: it wrote them)."""

    def __init__(self, source: Any, blocks: Iterator[tuple[slice, ...]]) -> None:
        self._source = source
        self._blocks = blocks
        self._recycle = _decodes_into(source)
        self._ready: queue.Queue[_Item | BaseException | None] = queue.Queue(maxsize=1)
        self._free: queue.Queue[np.ndarray] = queue.Queue()
        self._made = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="zarrox-copy-reader", daemon=True)

    def __enter__(self) -> _ReadAhead:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def __iter__(self) -> Iterator[_Item]:
        while True:
            item = self._next()
            if item is None:
                return
            yield item
            if self._recycle:
                base = item[1].base
                self._free.put(base if isinstance(base, np.ndarray) else item[1])

    def _next(self) -> _Item | None:
        while True:
            try:
                item = self._ready.get(timeout=_POLL_S)
            except queue.Empty:
                if self._thread.is_alive():
                    continue
                raise RuntimeError("the copy's reader thread ended without a word") from None
            if isinstance(item, BaseException):
                raise item
            return item

    # -- the reader thread --
    def _read(self) -> None:
        try:
            for region in self._blocks:
                self._put((region, self._values(region)))
            self._put(None)
        except _Stop:
            return
        except BaseException as e:  # handed to the consumer, which raises it
            try:
                self._put(e)
            except _Stop:
                return

    def _values(self, region: tuple[slice, ...]) -> np.ndarray:
        if not self._recycle:
            return np.asarray(self._source[region])
        shape = tuple(s.stop - s.start for s in region)
        n = math.prod(shape)
        values = self._buffer(n)[:n].reshape(shape)
        self._source.get_basic_selection(region, out=values)
        return values  # a view: its ``.base`` is the buffer, which goes back to the reader

    def _buffer(self, n: int) -> np.ndarray:
        """A flat buffer of at least ``n`` values: a new one while fewer than two were
        made, else one the consumer gave back (replaced when too small)."""
        if self._made < 2:
            self._made += 1
            return np.empty(n, dtype=self._source.dtype)
        got = self._until_stopped(lambda: self._free.get(timeout=_POLL_S))
        return got if got.size >= n else np.empty(n, dtype=self._source.dtype)

    def _put(self, item: _Item | BaseException | None) -> None:
        self._until_stopped(lambda: self._ready.put(item, timeout=_POLL_S))

    def _until_stopped(self, attempt: Callable[[], _T]) -> _T:
        """``attempt()`` (a queue operation that times out after :data:`_POLL_S`), tried
        again until it succeeds; _Stop once the consumer stopped."""
        while True:
            if self._stop.is_set():
                raise _Stop
            try:
                return attempt()
            except (queue.Empty, queue.Full):
                continue


def _decodes_into(source: Any) -> bool:
    """Whether ``source`` is a zarrox array (known by its core handle and ``_var_len``: this
    module sits below the array layer and does not import it) that decodes fixed-size values
    straight into a buffer it is given (``get_basic_selection(out=)``)."""
    return (
        getattr(source, "_var_len", None) is False
        and hasattr(source, "_handle")
        and callable(getattr(source, "get_basic_selection", None))
        and np.dtype(source.dtype).kind not in "OTSUV"
    )
