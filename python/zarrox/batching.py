"""Reads of many arrays at once: :func:`read_many` and :class:`Batch` (TensorStore's
``ts.Batch``; zarr-python #1805).

Every read is parsed as ``array[selection]`` would parse it (basic, orthogonal, coordinate
or mask selection), then the chunk I/O of all of them is handed to the engine in one call
(``_core.read_many``): their requests are in flight together on the I/O runtime, so a
dataset's twenty variables on an object store cost about one round of latency rather than
twenty, and their chunks decode on the one worker pool. Within each read the engine merges
byte ranges of one stored object as it always does (inner chunks of a shard). Reads of
stores served from Python, and of variable-length data, run one after the other in the same
call, with the same results.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrox import _core

if TYPE_CHECKING:
    from types import TracebackType

    from zarrox.array import Array, _IOStep, _Steps

__all__ = ["Batch", "BatchRead", "batch", "read_many"]


def _steps(array: Array, selection: Any, out: np.ndarray | None) -> _Steps:
    """The read steps of ``array[selection]`` (into ``out`` when given)."""
    from zarrox.array import Array

    if not isinstance(array, Array):
        raise TypeError(f"read_many reads zarrox arrays, got {type(array).__name__}")
    sel, basic = array._item_selection(selection)
    return array._read_steps(sel, out, basic=basic)


def _batched(array: Array, step: _IOStep) -> bool:
    """Whether the engine's one call takes ``step``: a read into a buffer of a store Rust
    reads (the others run through :func:`zarrox.array._do_io`)."""
    from zarrox.array import _IO
    from zarrox.staging import current_transaction

    if step[0] != _IO.READ or not array._handle.in_rust or array._chunk_io is not array._store:
        return False
    tx = current_transaction()
    # reads that must see a transaction's staged writes go through _do_io
    return tx is None or not tx.staged_for(array)


def read_many(
    reads: Iterable[tuple[Array, Any]], out: Sequence[np.ndarray | None] | None = None
) -> list[Any]:
    """The values of every ``(array, selection)`` in ``reads``, as ``array[selection]``
    gives them, read together (see the module's documentation). ``out``: for each read, an
    array to read into (or None), as ``get_*_selection(..., out=)`` takes it; the result
    is then that array. Errors are those of the reads, naming the array and chunk; the
    first read's error (in ``reads``' order) is raised once all have ended."""
    from zarrox.array import _do_io

    items = list(reads)
    outs = list(out) if out is not None else [None] * len(items)
    if len(outs) != len(items):
        raise ValueError(f"out has {len(outs)} entries for {len(items)} reads")
    gens = [_steps(a, s, o) for (a, s), o in zip(items, outs, strict=True)]
    arrays = [a for a, _ in items]
    results: list[Any] = [None] * len(items)
    pending: dict[int, _IOStep] = {}
    for i, gen in enumerate(gens):
        try:
            pending[i] = next(gen)
        except StopIteration as done:
            results[i] = done.value
    while pending:
        together = [i for i, step in pending.items() if _batched(arrays[i], step)]
        if together:
            _core.read_many(
                [
                    (
                        arrays[i]._handle,
                        pending[i][1],
                        pending[i][2],
                        "F" if pending[i][3] else "C",
                        str(arrays[i].store_path),
                    )
                    for i in together
                ]
            )
        sent = {i: None for i in together}
        for i, step in pending.items():
            if i not in sent:
                sent[i] = _do_io(arrays[i], step)
        pending = {}
        for i, value in sent.items():
            try:
                pending[i] = gens[i].send(value)
            except StopIteration as done:
                results[i] = done.value
    return results


class BatchRead:
    """A read collected by a :class:`Batch`: its value is there once the batch has been
    submitted (:meth:`result`)."""

    def __init__(self, batch: Batch, index: int) -> None:
        self._batch = batch
        self._index = index

    def done(self) -> bool:
        """Whether the batch was submitted (and this read ended)."""
        return self._batch._results is not None

    def result(self) -> Any:
        """The value read (``array[selection]``'s); the read's error if it failed. Raises
        RuntimeError before the batch was submitted."""
        results = self._batch._results
        if results is None:
            raise RuntimeError("the batch has not been submitted yet (leave its `with` block)")
        if self._batch._error is not None:
            raise self._batch._error
        return results[self._index]


class Batch:
    """Reads collected to be issued together (TensorStore's ``ts.Batch``)::

        with zarrox.batch() as b:
            t = b.read(temperature, (0, slice(None), slice(None)))
            p = b.read(pressure, (0, slice(None), slice(None)))
        t.result(), p.result()

    :meth:`read` returns a :class:`BatchRead`; leaving the ``with`` block (or
    :meth:`submit`) runs them all as :func:`read_many` does. A block left by an exception
    issues nothing."""

    def __init__(self) -> None:
        self._reads: list[tuple[Array, Any]] = []
        self._outs: list[np.ndarray | None] = []
        self._results: list[Any] | None = None
        self._error: BaseException | None = None

    def read(
        self, array: Array, selection: Any = Ellipsis, *, out: np.ndarray | None = None
    ) -> BatchRead:
        """Collect ``array[selection]`` (into ``out`` when given) for the batch."""
        if self._results is not None:
            raise RuntimeError("the batch was submitted: start another one")
        self._reads.append((array, selection))
        self._outs.append(out)
        return BatchRead(self, len(self._reads) - 1)

    def submit(self) -> None:
        """Issue every read collected; each :class:`BatchRead` then has its result (or,
        when a read failed, every one raises that error)."""
        if self._results is not None:
            return
        try:
            self._results = read_many(self._reads, self._outs)
        except Exception as e:
            self._results = []
            self._error = e
            raise

    def __enter__(self) -> Batch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.submit()


def batch() -> Batch:
    """A new :class:`Batch`, for ``with zarrox.batch() as b: ...``."""
    return Batch()
