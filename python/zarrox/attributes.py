"""``attrs``: a mutable mapping that persists every change to the node's metadata."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any, Protocol


class _Node(Protocol):
    @property
    def _attributes(self) -> dict[str, Any]: ...

    def _save_metadata(self) -> None: ...


class Attributes(MutableMapping[str, Any]):
    """The user attributes of an array or group. Writes go to the store at once."""

    def __init__(self, node: _Node) -> None:
        self._node = node

    def __getitem__(self, key: str) -> Any:
        return self._node._attributes[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._node._attributes[key] = value
        self._node._save_metadata()

    def __delitem__(self, key: str) -> None:
        del self._node._attributes[key]
        self._node._save_metadata()

    def __iter__(self) -> Iterator[str]:
        return iter(self._node._attributes)

    def __len__(self) -> int:
        return len(self._node._attributes)

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Update several attributes with a single metadata write."""
        self._node._attributes.update(*args, **kwargs)
        self._node._save_metadata()

    def put(self, attributes: dict[str, Any]) -> None:
        """Replace all attributes."""
        self._node._attributes.clear()
        self.update(attributes)

    def asdict(self) -> dict[str, Any]:
        return dict(self._node._attributes)

    def __repr__(self) -> str:
        return repr(self._node._attributes)
