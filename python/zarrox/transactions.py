"""Transactions: writes to any number of arrays staged in memory and committed together,
each stored object (chunk, or shard) written once (TensorStore's ``ts.Transaction`` in its
isolated mode; zarr-python #3604).

Inside ``with zarrox.transaction():`` (or ``with tx:`` for a :class:`Transaction` ``tx``)
every write of zarrox's own API (``a[...] = v``, ``oindex``, ``vindex``, ``blocks``,
``set_*_selection``, :class:`~zarrox.AsyncArray`'s writes) goes to the transaction instead of
the store, and every read of an array it has staged writes for sees them. Nothing reaches
the store until the block ends without an exception: then each stored object the writes
touched is written once, merging all of them. An exception in the block discards
everything staged. ``async with zarrox.transaction():`` does the same in asynchronous code,
committing with :meth:`Transaction.commit_async` (an awaitable the engine completes).

How the commit writes an object: where the staged writes cover all of it, it is encoded
and stored without reading it (no condition is needed: nothing stored is kept); else the
object is read with its generation, the staged elements merged in, and the result stored
only if the object is still that generation, re-read and merged again if another writer
committed first (the engine's read-modify-write, ``rust/engine/commit.rs``). All the
objects of all the arrays go to the engine in one call (``_core.write_many``), their
requests in flight together. A write that keeps losing raises
:class:`~zarrox.errors.WriteConflictError` naming every object that did not commit.

What is atomic: each stored object, on stores with generations (local files, memory,
object stores; see the README's table). A commit of several objects is not atomic as a
whole: no store zarrox writes has multi-object transactions, and where some objects commit
and others fail, the error says which. Stores served from Python have no generations, so
their objects are written unconditionally (the last writer wins), one after another.

How writes are staged: per array, two in-memory arrays of the array's shape on its chunk
grid (inner chunks when sharded): one holds the values written, uncompressed, one which
elements were written. Their size counts against the transaction's budget (``budget``, or
the configuration's ``transaction.bytes``); a write that would exceed it fails the
transaction (:class:`~zarrox.errors.TransactionError`), which then commits nothing.
"""

from __future__ import annotations

import contextvars
import json
import math
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from zarrox import _core
from zarrox.errors import TransactionError, WriteConflictError
from zarrox.staging import StagingTransaction, current_transaction, reset_current, set_current

if TYPE_CHECKING:
    from types import TracebackType

    from zarrox.array import Array, _IOStep

__all__ = ["Transaction", "current_transaction", "transaction"]


def _array_key(array: Array) -> tuple[Any, ...]:
    """Which stored array ``array`` is: two Array objects opened on the same location (with
    the same shape and data type: one opened after a resize is another) share what a
    transaction staged for it. A memory store is its own location."""
    store = array._store
    url = getattr(store, "url", None)
    kind = (array._path, array.shape, str(array.dtype))
    if not url or url == "memory://":
        # the store itself where it says which stores are one (a memory store over the
        # user's dict is equal to another over the same dict), else its identity
        try:
            hash(store)
        except TypeError:
            return ("object", id(store), *kind)
        return ("object", store, *kind)
    return ("url", type(store).__name__, str(url), *kind)


def _bytes_codec() -> dict[str, Any]:
    return {"name": "bytes", "configuration": {"endian": "little"}}


class _Staged:
    """What a transaction staged for one array: the values written and which elements
    were written, each an in-memory array of the array's shape on its chunk grid (inner
    chunks when sharded, so that a small write copies a small chunk), stored raw."""

    def __init__(self, array: Array) -> None:
        self.array = array
        core = array._core
        sharding = array._sharding_config()
        self.rectilinear = array._rectilinear
        grid: dict[str, Any]
        if self.rectilinear is not None:
            # staged per stored object: the grid's chunks are not regular inside it
            grid = {"chunk_shapes": self.rectilinear.core_json()}
            self.outer: tuple[int, ...] = ()
            self.inner: tuple[int, ...] = ()
        else:
            self.outer = tuple(int(c) for c in core["chunk_shape"])
            self.inner = (
                tuple(int(c) for c in sharding["chunk_shape"])
                if sharding is not None
                else self.outer
            )
            grid = {"chunk_shape": list(self.inner)}
        data_type = core["data_type"]
        var_len = data_type in ("string", "bytes")
        codec = (
            {"name": "vlen-utf8" if data_type == "string" else "vlen-bytes", "configuration": {}}
            if var_len
            else _bytes_codec()
        )
        keys = {"name": "default", "separator": "/"}
        shape = list(core["shape"])
        self.store = _core.StoreHandle.memory()

        def staging_array(
            name: str, data_type: str | dict[str, Any], codec: dict[str, Any], fill: bytes
        ) -> Any:
            """An array of the array's shape and grid in the memory store, under ``name``."""
            return _core.ArrayHandle(
                self.store,
                name,
                json.dumps(
                    {
                        "shape": shape,
                        "data_type": data_type,
                        "codecs": [codec],
                        "chunk_key_encoding": keys,
                        **grid,
                    }
                ),
                fill,
                True,
            )

        self.data = staging_array("data", data_type, codec, array._fill_bytes)
        self.mask = staging_array("mask", "bool", _bytes_codec(), b"\x00")
        self.var_len = var_len
        self.dtype = array.dtype
        #: grid coordinates of the staged chunks written whole (so the commit need not
        #: look at their marks)
        self.whole: set[tuple[int, ...]] = set()

    @property
    def nbytes(self) -> int:
        """The memory the staged values and marks hold."""
        return int(self.store.bytes_in_memory() or 0)

    # -- staging -----------------------------------------------------------------------
    def stage(self, step: _IOStep) -> None:
        _, sel, value, fortran = step
        if fortran and isinstance(value, np.ndarray):
            # Fortran-ordered values (of a Fortran-ordered array's chunks): staged C-ordered
            shape = tuple(sel.buffer_shape)
            values = np.frombuffer(value, dtype=self.dtype).reshape(shape[::-1]).T
            value = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
        self.data.write(sel, value, "C")
        self.mask.write(sel, b"\x01", "C")

    # -- reading -----------------------------------------------------------------------
    def written(self, sel: Any) -> np.ndarray:
        """Which elements of the selection ``sel`` (its buffer's shape) were staged."""
        mask = np.empty(tuple(sel.buffer_shape), dtype=np.bool_)
        self.mask.read(sel, mask.reshape(-1).view(np.uint8), "C")
        return mask

    def read_into(self, step: _IOStep, written: np.ndarray, whole: bool) -> None:
        """Lay the staged values of the read ``step`` (into a buffer: fixed-size elements)
        over its result where ``written`` says; all of it when ``whole`` (the store was not
        read)."""
        _, sel, buf, fortran = step
        shape = tuple(sel.buffer_shape)
        if fortran:
            result = buf.view(self.dtype).reshape(shape[::-1]).T
        else:
            result = buf.view(self.dtype).reshape(shape)
        if whole and not fortran:
            self.data.read(sel, buf, "C")
            return
        staged = np.empty(shape, dtype=self.dtype)
        self.data.read(sel, staged.reshape(-1).view(np.uint8), "C")
        if whole:
            result[...] = staged
        else:
            np.copyto(result, staged, where=written)

    def _values(self, sel: Any) -> list[Any]:
        """The staged variable-length values of ``sel`` (a memory store: Rust reads it)."""
        got = self.data.read(sel)
        assert isinstance(got, tuple)
        return list(got[0])

    def read_var(self, sel: Any, values: list[Any], written: np.ndarray) -> list[Any]:
        staged = self._values(sel)
        flat = written.reshape(-1)
        return [s if w else v for v, s, w in zip(values, staged, flat, strict=True)]

    # -- committing --------------------------------------------------------------------
    def objects(self) -> dict[tuple[int, ...], bool]:
        """The grid coordinates of the stored objects (shards, or chunks) staged writes
        touch, each with whether it is known to be written whole: every chunk of it staged
        by writes that covered the chunk (else its marks say)."""
        staged: dict[tuple[int, ...], int] = {}
        whole: dict[tuple[int, ...], int] = {}
        for _, coords in self.mask.stored_chunks():
            c = tuple(int(x) for x in coords)
            o = c if self.rectilinear is not None else self.object_of(c)
            staged[o] = staged.get(o, 0) + 1
            if c in self.whole:
                whole[o] = whole.get(o, 0) + 1
        return {o: whole.get(o, 0) == self.chunks_in(o) for o in staged}

    def object_of(self, chunk: tuple[int, ...]) -> tuple[int, ...]:
        """The stored object (regular grid) that the staged chunk ``chunk`` is in."""
        return tuple(i * n // o for i, n, o in zip(chunk, self.inner, self.outer, strict=True))

    def chunks_in(self, coords: tuple[int, ...]) -> int:
        """How many staged chunks the stored object at ``coords`` has inside the array."""
        if self.rectilinear is not None:
            return 1
        return math.prod(
            -(-(b.stop - b.start) // n) for b, n in zip(self.box(coords), self.inner, strict=True)
        )

    def box(self, coords: tuple[int, ...]) -> tuple[slice, ...]:
        """The elements of the stored object at grid ``coords`` inside the array."""
        shape = self.array.shape
        if self.rectilinear is not None:
            spans = [self.rectilinear.chunk(d, c) for d, c in enumerate(coords)]
            return tuple(
                slice(start, min(start + size, n))
                for (start, size), n in zip(spans, shape, strict=True)
            )
        return tuple(
            slice(c * o, min((c + 1) * o, n))
            for c, o, n in zip(coords, self.outer, shape, strict=True)
        )

    def writes(self) -> Iterator[tuple[tuple[int, ...], Any, Any]]:
        """Per stored object: (its coordinates, a selection, the values) that writes what
        was staged for it in one write: the whole object's region where every element of it
        was written, else the written elements by coordinates."""
        shape = list(self.array.shape)
        for coords, known_whole in self.objects().items():
            box = self.box(coords)
            sel = _core.Selection.basic(box, shape)
            written = None if known_whole else self.written(sel)
            if written is not None and not written.any():
                continue
            if written is None or written.all():
                yield coords, sel, self._payload(sel, tuple(sel.buffer_shape))
                continue
            where = np.nonzero(written)
            points = tuple(w + b.start for w, b in zip(where, box, strict=True))
            psel = _core.Selection.coordinate(points, shape)
            yield coords, psel, self._payload(psel, (len(where[0]),))

    def _payload(self, sel: Any, shape: tuple[int, ...]) -> Any:
        """The staged values of ``sel`` as a write takes them: the variable-length values,
        or the bytes (a uint8 view) of a buffer of ``shape``."""
        if self.var_len:
            return self._values(sel)
        buf = np.empty(shape, dtype=self.dtype)
        self.data.read(sel, buf.reshape(-1).view(np.uint8), "C")
        return buf.reshape(-1).view(np.uint8)


class _Staging:
    """:meth:`Transaction.staging`'s block."""

    def __init__(self, tx: Transaction) -> None:
        self._tx = tx
        self._token: contextvars.Token[StagingTransaction | None] | None = None

    def __enter__(self) -> Transaction:
        self._tx._check_open()
        self._token = set_current(self._tx)
        return self._tx

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None
        reset_current(self._token)


class Transaction:
    """Writes staged in memory and committed together (see the module's documentation).

    ``with Transaction() as tx:`` stages the block's writes and commits them when it ends
    (discards them on an exception), as :func:`transaction` does. The explicit form::

        tx = zarrox.Transaction()
        with tx.staging():
            a[0:10] = 1
        with tx.staging():
            b[5] = 2
        tx.commit()  # or tx.abort()

    ``budget``: bytes staged at most (None: the configuration's ``transaction.bytes``).
    """

    def __init__(self, budget: int | None = None) -> None:
        from zarrox.config import config

        self.budget = int(config["transaction.bytes"] if budget is None else budget)
        if self.budget < 0:
            raise ValueError(f"budget must be >= 0, got {budget}")
        self._staged: dict[tuple[Any, ...], _Staged] = {}
        self._state = "open"  # then "committed" or "aborted"
        self._failure: str | None = None
        self._lock = threading.RLock()
        self._tokens: list[contextvars.Token[StagingTransaction | None]] = []

    def __repr__(self) -> str:
        return f"<zarrox.Transaction {self._state}, {len(self._staged)} arrays staged>"

    # -- state -------------------------------------------------------------------------
    @property
    def open(self) -> bool:
        """Whether writes can still be staged and the transaction committed."""
        return self._state == "open"

    @property
    def committed(self) -> bool:
        return self._state == "committed"

    @property
    def aborted(self) -> bool:
        return self._state == "aborted"

    @property
    def staged_bytes(self) -> int:
        """Memory the staged writes hold (counted as the budget counts it)."""
        with self._lock:
            return sum(s.nbytes for s in self._staged.values())

    def _check_open(self) -> None:
        if self._state != "open":
            why = f" ({self._failure})" if self._failure else ""
            raise TransactionError(f"the transaction is {self._state}{why}; start a new one")

    # -- scopes ------------------------------------------------------------------------
    def staging(self) -> _Staging:
        """A block whose writes this transaction stages (and whose reads see them),
        without committing when it ends."""
        return _Staging(self)

    def __enter__(self) -> Transaction:
        self._check_open()
        self._tokens.append(set_current(self))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._leave(failed=exc_type is not None):
            self.commit()

    def _leave(self, *, failed: bool) -> bool:
        """Leave a ``with`` (or ``async with``) block: this transaction is no longer the
        current one, and an exception in the block aborts it. Whether it is to be
        committed now."""
        reset_current(self._tokens.pop())
        if failed:
            self.abort()
            return False
        return self._state == "open"

    # -- what arrays call --------------------------------------------------------------
    def _for(self, array: Array, create: bool) -> _Staged | None:
        key = array._transaction_key
        if key is None:
            key = array._transaction_key = _array_key(array)
        staged = self._staged.get(key)
        if staged is None and create:
            staged = self._staged[key] = _Staged(array)
        return staged

    def stage(self, array: Array, step: _IOStep) -> None:
        """Stage the write ``step`` of ``array``."""
        with self._lock:
            self._check_open()
            staged = self._for(array, create=True)
            assert staged is not None
            staged.stage(step)
            self._check_budget()

    def stage_plain(self, array: Array, selection: Any, value: Any) -> bool:
        """Stage ``array[selection] = value`` in one Rust call when the selection is plain
        and ``value`` an array of exactly its dtype and shape (``ArrayHandle.stage_basic``);
        False (nothing staged) for anything else."""
        with self._lock:
            self._check_open()
            staged = self._for(array, create=True)
            assert staged is not None
            whole = staged.data.stage_basic(selection, value, array._plain_dtype, staged.mask)
            if whole is None:
                return False
            staged.whole.update(tuple(c) for c in whole)
            self._check_budget()
            return True

    def _check_budget(self) -> None:
        used = self.staged_bytes
        if used > self.budget:
            self._failure = (
                f"the staged writes need {used} bytes, over the budget of {self.budget} "
                "(Transaction(budget=...) or the configuration's 'transaction.bytes')"
            )
            self._discard()
            raise TransactionError(f"transaction aborted: {self._failure}")

    def staged_for(self, array: Array) -> bool:
        return self._for(array, create=False) is not None

    def read(self, array: Array, step: _IOStep, base: Callable[[], Any]) -> Any:
        """The read ``step`` of ``array``, seeing the staged writes; ``base`` reads the
        store (not at all where the staged writes cover the selection)."""
        plan = self.read_plan(array, step)
        if plan is None:
            return base()
        staged, written = plan
        if not staged.var_len and written.all():
            with self._lock:
                return staged.read_into(step, written, True)
        return self.finish_read(plan, step, base())

    def read_plan(self, array: Array, step: _IOStep) -> tuple[_Staged, np.ndarray] | None:
        """For an awaited read: None when the store's values are the answer, else what
        to lay over them (:meth:`finish_read`)."""
        with self._lock:
            staged = self._for(array, create=False)
            if staged is None:
                return None
            written = staged.written(step[1])
            return (staged, written) if written.any() else None

    def finish_read(self, plan: tuple[_Staged, np.ndarray], step: _IOStep, got: Any) -> Any:
        staged, written = plan
        with self._lock:
            if staged.var_len:
                return staged.read_var(step[1], got, written)
            return staged.read_into(step, written, False)

    # -- the end -----------------------------------------------------------------------
    def abort(self) -> None:
        """Discard everything staged; nothing is written."""
        with self._lock:
            if self._state == "open":
                self._discard()

    def _discard(self) -> None:
        self._staged.clear()
        self._state = "aborted"

    def commit(self) -> None:
        """Write every stored object the staged writes touch, once each (see the module's
        documentation); raises :class:`~zarrox.errors.WriteConflictError` naming the
        objects that did not commit."""
        plan = self._begin_commit()
        try:
            failures = plan.run()
        finally:
            self._end_commit()
        self._raise(failures)

    async def commit_async(self) -> None:
        """:meth:`commit`, awaited: the engine completes the writes of stores Rust writes
        (the event loop is not blocked while they are in flight)."""
        plan = self._begin_commit()
        try:
            failures = await plan.run_async()
        finally:
            self._end_commit()
        self._raise(failures)

    async def __aenter__(self) -> Transaction:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._leave(failed=exc_type is not None):
            await self.commit_async()

    def _begin_commit(self) -> _CommitPlan:
        with self._lock:
            self._check_open()
            self._state = "committing"
            try:
                return _CommitPlan(list(self._staged.values()))
            except BaseException:
                self._end_commit()
                raise

    def _end_commit(self) -> None:
        with self._lock:
            self._staged.clear()
            self._state = "committed"

    def _raise(self, failures: list[tuple[str, Exception]]) -> None:
        if failures:
            self._state = "failed"
            raise _commit_error(failures)


def _object_name(staged: _Staged, coords: tuple[int, ...]) -> str:
    array = staged.array
    return f"{array.store_path} chunk '{array._handle.chunk_key([int(c) for c in coords])}'"


class _CommitPlan:
    """The writes of a commit: per stored object a selection and its values, those of
    stores Rust writes to go to the engine in one call, the others one by one."""

    def __init__(self, staged: list[_Staged]) -> None:
        self.together: list[tuple[Any, Any, Any, Literal["C"], str]] = []
        self.names: list[str] = []
        #: (array, selection, values, object name) of stores served from Python
        self.one_by_one: list[tuple[Any, Any, Any, str]] = []
        for s in staged:
            array = s.array
            rust = array._handle.in_rust and array._chunk_io is array._store
            for coords, sel, value in s.writes():
                name = _object_name(s, coords)
                if rust:
                    self.together.append((array._handle, sel, value, "C", str(array.store_path)))
                    self.names.append(name)
                else:
                    self.one_by_one.append((array, sel, value, name))

    def _named(self, errors: list[Exception | None]) -> list[tuple[str, Exception]]:
        return [(n, e) for n, e in zip(self.names, errors, strict=True) if e is not None]

    def run(self) -> list[tuple[str, Exception]]:
        """Write everything; the (object, error) of those that failed."""
        failures = []
        for array, sel, value, name in self.one_by_one:
            try:
                array._io_write(sel, value, False)
            except Exception as e:  # noqa: BLE001 - reported with the others
                failures.append((name, e))
        if self.together:
            failures += self._named(_core.write_many(self.together))
        return failures

    async def run_async(self) -> list[tuple[str, Exception]]:
        """:meth:`run`, awaited: the engine's writes completed by the engine (no Python
        thread waits), those of stores served from Python on a worker thread."""
        import asyncio  # not at import: `import zarrox` does not load asyncio

        failures = []
        for array, sel, value, name in self.one_by_one:
            try:
                await asyncio.to_thread(array._io_write, sel, value, False)
            except Exception as e:  # noqa: BLE001 - reported with the others
                failures.append((name, e))
        if self.together:
            failures += self._named(await _core.write_many_async(self.together))
        return failures


def _commit_error(failures: list[tuple[str, Exception]]) -> Exception:
    names = ", ".join(name for name, _ in failures)
    first = failures[0][1]
    conflicts = all(isinstance(e, WriteConflictError) for _, e in failures)
    message = (
        f"the transaction's commit failed for {len(failures)} stored object(s): {names} "
        f"(the others were written); first error: {first}"
    )
    if conflicts:
        return WriteConflictError(message)
    kinds = {type(e) for _, e in failures}
    if len(kinds) == 1 and _rebuildable(first):
        return type(first)(message)
    return TransactionError(message)


def _rebuildable(e: Exception) -> bool:
    try:
        type(e)("")
    except Exception:  # noqa: BLE001
        return False
    return True


def transaction(budget: int | None = None) -> Transaction:
    """``with zarrox.transaction():`` stages the block's writes and commits them when it
    ends without an exception (see the module's documentation)."""
    return Transaction(budget)
