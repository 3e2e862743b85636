"""Which transaction, if any, stages the writes made in this context: the one thing arrays
ask about transactions (:mod:`zarrox.transactions` builds them). A context variable, so that
threads and asyncio tasks see the transaction of the context they were started in."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

__all__ = ["StagingTransaction", "current_transaction", "reset_current", "set_current"]


@runtime_checkable
class StagingTransaction(Protocol):
    """What an array asks of the transaction in force (``array`` is a
    :class:`zarrox.Array`; ``step`` one of its chunk I/O steps), and a block that makes it
    the one in force (:meth:`staging`: what a view bound to it reads and writes in)."""

    def staging(self) -> contextlib.AbstractContextManager[Any]:
        """A block in which this transaction stages the writes."""

    def stage(self, array: Any, step: Any) -> None:
        """Stage the write ``step`` of ``array``."""

    def stage_plain(self, array: Any, selection: Any, value: Any) -> bool:
        """Stage ``array[selection] = value`` in one call where it can (else False)."""

    def staged_for(self, array: Any) -> bool:
        """Whether writes to ``array`` are staged."""

    def read(self, array: Any, step: Any, base: Callable[[], Any]) -> Any:
        """The read ``step`` seeing the staged writes; ``base`` reads the store."""

    def read_plan(self, array: Any, step: Any) -> Any:
        """For an awaited read: None, or what :meth:`finish_read` lays over the store's."""

    def finish_read(self, plan: Any, step: Any, got: Any) -> Any:
        """The read's result with the staged writes laid over ``got``."""


_CURRENT: contextvars.ContextVar[StagingTransaction | None] = contextvars.ContextVar(
    "zarrox_transaction", default=None
)

#: The transaction staging this context's writes (None outside of one).
current_transaction: Callable[[], StagingTransaction | None] = _CURRENT.get

#: Make a transaction the current one; returns the token that undoes it (``_CURRENT.reset``).
set_current = _CURRENT.set


def reset_current(token: contextvars.Token[StagingTransaction | None]) -> None:
    """Undo a :data:`set_current`."""
    _CURRENT.reset(token)
