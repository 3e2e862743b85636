"""Stores whose keys Python reads and writes: :class:`PythonServedStore`, the base of the
stores Rust cannot reach, answering the engine's requests one by one."""

from __future__ import annotations

from typing import Any

from zarrox.errors import WriteConflictError
from zarrox.storage.base import Store, _split_listing


class PythonServedStore(Store):
    """A store whose keys Python reads and writes, serving the engine's requests: the base
    of stores over a Python mapping or an obstore object that Rust cannot reach. A store
    supplies ``_read(key, span)``, ``_write(key, value)`` and ``_remove(key)`` (see
    :func:`zarrox.storage.bridge.answer`), or performs whole requests (``_perform``); its
    methods are requests of the engine's form too."""

    def _ask(self, op: str, key: str, arg: Any = None) -> Any:
        return self._perform((0, op, key, arg))

    def get(self, key: str) -> bytes | None:
        got = self._ask("get", key)
        return None if got is None else bytes(memoryview(got))

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        arg = ("suffix", -start) if start < 0 and length is None else (start, length)
        got = self._ask("get", key, arg)
        return None if got is None else bytes(memoryview(got))

    def set(self, key: str, value: bytes) -> None:
        self._check_writable(key)
        self._ask("set", key, value)

    def delete(self, key: str) -> None:
        self._check_writable(key)
        self._ask("delete", key)

    def exists(self, key: str) -> bool:
        return self._ask("get", key) is not None

    def conditional_writes(self) -> bool:
        # Python stores have no generations: the last writer wins (README).
        return False

    def get_versioned(self, key: str) -> tuple[bytes | None, str]:
        return self.get(key), "unknown"

    def set_if(self, key: str, value: bytes, generation: str) -> bool:
        if generation != "unknown":
            raise WriteConflictError(
                f"{self.location(key)!r}: a store served from Python cannot write on condition"
            )
        self.set(key, value)
        return True

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        return _split_listing(prefix, self.list_prefix(prefix))
