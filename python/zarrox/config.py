"""Runtime configuration, with zarr-python's key names.

>>> with zarrox.config.set({"array.write_empty_chunks": True}): ...
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator, Mapping
from typing import Any

from zarrox import _core

_DEFAULTS: dict[str, Any] = {
    "array.write_empty_chunks": False,
    "array.order": "C",
    # unpickle chunks stored with numcodecs' pickle codec (it can run arbitrary code; see
    # zarrox.pickle_codec): only when exactly True
    "array.allow_unsafe_pickle_decode": False,
    "threading.max_workers": None,
    # requests kept in flight on an object store (None: 64)
    "io.concurrency": None,
    # local stores sync every write to disk (file and directory) before it returns
    "store.fsync": False,
    # read-modify-writes (partial chunk and shard writes, metadata updates) commit only if
    # the stored value is still the one they read: "auto" where the store can check that,
    # "require" (an error where it cannot), "off" (the last writer wins)
    "io.conditional_writes": "auto",
    # the decoded-chunk cache's budget in bytes (0: off), and when a cached chunk is checked
    # against the store before it is returned: True (always: never stale), "open" (when it
    # was cached before the array was opened), False (never), or a number of seconds (when
    # it was last checked longer ago)
    "cache.bytes": 0,
    # bytes a transaction's staged writes may hold (zarrox.Transaction's budget)
    "transaction.bytes": 1 << 30,
    "cache.recheck": True,
}


def recheck_mode(value: Any) -> tuple[str, float]:
    """``cache.recheck`` (or a spec's ``recheck_cached_data``) as the core's (mode, seconds)."""
    if value is True:
        return "always", 0.0
    if value is False:
        return "never", 0.0
    if value == "open":
        return "open", 0.0
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return "within", float(value)
    raise ValueError(
        f"cache.recheck must be True, False, 'open' or a number of seconds >= 0, got {value!r}"
    )


def _apply_cache(values: Mapping[str, Any]) -> None:
    size = values["cache.bytes"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"cache.bytes must be an integer >= 0, got {size!r}")
    mode, seconds = recheck_mode(values["cache.recheck"])
    _core.set_chunk_cache(size, mode, seconds)


class Config:
    """A flat mapping of dotted keys to values; unknown keys are an error."""

    def __init__(self) -> None:
        self._values = copy.deepcopy(_DEFAULTS)

    def get(self, key: str, default: Any = None) -> Any:
        return self._values.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def _apply(self, values: Mapping[str, Any]) -> None:
        for key, value in values.items():
            if key not in _DEFAULTS:
                raise KeyError(f"unknown zarrox configuration key {key!r}")
            if key == "array.order" and value not in ("C", "F"):
                raise ValueError(f"array.order must be 'C' or 'F', got {value!r}")
            if key == "threading.max_workers":
                _core.set_num_threads(int(value or 0))
            if key == "transaction.bytes" and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise ValueError(f"transaction.bytes must be an integer >= 0, got {value!r}")
            if key == "io.concurrency":
                _core.set_io_concurrency(int(value or 0))
            if key == "io.conditional_writes":
                _core.set_conditional_writes(value)
            if key in ("cache.bytes", "cache.recheck"):
                _apply_cache({**self._values, **values})
            self._values[key] = value

    @contextlib.contextmanager
    def _scoped(self, old: dict[str, Any]) -> Iterator[Config]:
        try:
            yield self
        finally:
            self._values = old
            _core.set_num_threads(int(old["threading.max_workers"] or 0))
            _core.set_io_concurrency(int(old["io.concurrency"] or 0))
            _core.set_conditional_writes(old["io.conditional_writes"])
            _apply_cache(old)

    def set(self, values: Mapping[str, Any]) -> contextlib.AbstractContextManager[Config]:
        """Set values now; used as a context manager, restore them on exit."""
        old = dict(self._values)
        self._apply(values)
        return self._scoped(old)

    def reset(self) -> None:
        self._values = copy.deepcopy(_DEFAULTS)
        _core.set_num_threads(0)
        _core.set_io_concurrency(0)
        _core.set_conditional_writes("auto")
        _apply_cache(_DEFAULTS)

    def to_dict(self) -> dict[str, Any]:
        """The configuration as nested dicts (``{"array": {"order": "C", ...}, ...}``)."""
        nested: dict[str, Any] = {}
        for key, value in self._values.items():
            *parents, leaf = key.split(".")
            node = nested
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = copy.deepcopy(value)
        return nested

    def pprint(self, **kwargs: Any) -> None:
        """Print :meth:`to_dict` with :func:`pprint.pprint` (``stream``, ``width``, ...)."""
        import pprint

        pprint.pprint(self.to_dict(), **kwargs)

    def __repr__(self) -> str:
        return f"Config({self._values!r})"


config = Config()
