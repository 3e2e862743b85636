"""Progress bars of the command line (rich), shown on stderr when it is a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

#: (done, total) -> None
Update = Callable[[int, int], None]


def _noop(done: int, total: int) -> None:
    return None


def wanted(disabled: bool = False) -> bool:
    """Whether to draw progress: stderr is a terminal and it was not turned off."""
    return not disabled and sys.stderr.isatty()


@contextmanager
def progress_bar(
    label: str, *, unit: Literal["bytes", "items"] = "bytes", enabled: bool = True
) -> Iterator[Update]:
    """A progress bar on stderr while the block runs; yields ``update(done, total)``. Nothing
    is drawn (and rich is not imported) when ``enabled`` is false."""
    if not enabled:
        yield _noop
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    amount = (
        [DownloadColumn(), TransferSpeedColumn()] if unit == "bytes" else [MofNCompleteColumn()]
    )
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        *amount,
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    ) as bars:
        task = bars.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bars.update(task, completed=done, total=total)

        yield update
