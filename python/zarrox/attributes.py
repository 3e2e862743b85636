"""``attrs``: a mutable mapping that persists every change to the node's metadata."""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any, Protocol


class _Node(Protocol):
    @property
    def _attributes(self) -> dict[str, Any]: ...

    def _update_metadata(self, change: Callable[[Any], None]) -> None: ...


class Attributes(MutableMapping[str, Any]):
    """The user attributes of an array or group. Writes go to the store at once, each a
    read-modify-write of the stored metadata (see ``io.conditional_writes``): processes that
    set different attributes at the same time keep all of them."""

    def __init__(self, node: _Node) -> None:
        self._node = node

    def __getitem__(self, key: str) -> Any:
        return self._node._attributes[key]

    def _change(self, change: Callable[[dict[str, Any]], None]) -> None:
        """Apply ``change`` to the stored attributes and save; on failure nothing changes."""
        self._node._update_metadata(lambda meta: change(meta.attributes))

    def __setitem__(self, key: str, value: Any) -> None:
        self._change(lambda a: a.__setitem__(key, value))

    def __delitem__(self, key: str) -> None:
        if key not in self._node._attributes:
            raise KeyError(key)
        self._change(lambda a: a.pop(key, None))

    def __iter__(self) -> Iterator[str]:
        return iter(self._node._attributes)

    def __len__(self) -> int:
        return len(self._node._attributes)

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Update several attributes with a single metadata write."""
        new = dict(*args, **kwargs)
        self._change(lambda a: a.update(new))

    def put(self, attributes: dict[str, Any]) -> None:
        """Replace all attributes with a single metadata write."""
        new = dict(attributes)

        def replace(a: dict[str, Any]) -> None:
            a.clear()
            a.update(new)

        self._change(replace)

    def asdict(self) -> dict[str, Any]:
        return dict(self._node._attributes)

    def __repr__(self) -> str:
        return repr(self._node._attributes)
