"""Stores whose keys Python reads and writes: :class:`PythonServedStore`, the base of the
stores Rust cannot reach, answering the engine's requests one by one."""

from __future__ import annotations

from typing import Any

from zarrox.errors import WriteConflictError
from zarrox.storage.base import Store, _split_listing


class PythonServedStore(Store):
    """A store whose keys Python reads and writes (``_answer``), serving the engine's
    requests: the base of stores over a Python mapping or an obstore object that Rust
    cannot reach."""

    def _answer(self, op: str, key: str, arg: Any = None) -> Any:
        """Perform a request: ``get`` (``arg`` None, ``(offset, length | None)`` or
        ``("suffix", n)``; None when missing), ``set`` (``arg``: the bytes), ``delete``."""
        raise NotImplementedError

    def get(self, key: str) -> bytes | None:
        got = self._answer("get", key)
        return None if got is None else bytes(memoryview(got))

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        arg = ("suffix", -start) if start < 0 and length is None else (start, length)
        got = self._answer("get", key, arg)
        return None if got is None else bytes(memoryview(got))

    def set(self, key: str, value: bytes) -> None:
        self._check_writable(key)
        self._answer("set", key, value)

    def delete(self, key: str) -> None:
        self._check_writable(key)
        self._answer("delete", key)

    def exists(self, key: str) -> bool:
        return self._answer("get", key) is not None

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
