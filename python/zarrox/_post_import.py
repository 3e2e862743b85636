"""Run code when another library's module is imported, without importing it.

zarrox works with zarr-python where the user has it (its exceptions subclass zarr-python's,
zarr-python takes zarrox stores), but importing zarr-python costs more than zarrox itself,
so ``import zarrox`` must not. :func:`when_imported` runs a callback with a module at once
when it is in ``sys.modules`` already, else right after the module is first imported (its
code has run, before the ``import`` statement that asked for it returns): a finder at the
front of ``sys.meta_path`` notices the import, finds the module's spec with the finders
behind it and runs the callback after the module's own loader has executed it. The finder
steps aside (leaves ``sys.meta_path``) once every awaited module has been imported, and the
module keeps its own loader (``module.__loader__``, ``module.__spec__.loader``).
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

Callback = Callable[[ModuleType], None]

#: module name -> the callbacks waiting for its import
_waiting: dict[str, list[Callback]] = {}
_lock = threading.RLock()


def when_imported(name: str, callback: Callback) -> None:
    """Call ``callback(module)`` with the module ``name``: now if it is imported already,
    else once it has been imported (by anyone). A callback that raises does not break the
    import: its error is reported as a warning."""
    with _lock:
        module = sys.modules.get(name)
        if module is None:
            _waiting.setdefault(name, []).append(callback)
            if _FINDER not in sys.meta_path:
                sys.meta_path.insert(0, _FINDER)
            return
    _call(name, callback, module)


def _call(name: str, callback: Callback, module: ModuleType) -> None:
    try:
        callback(module)
    except Exception as e:  # noqa: BLE001 - the user's import must not fail because of zarrox
        warnings.warn(
            f"zarrox could not adapt to {name} ({type(e).__name__}: {e})",
            RuntimeWarning,
            stacklevel=2,
        )


def _imported(name: str, module: ModuleType) -> None:
    with _lock:
        callbacks = _waiting.pop(name, [])
        if not _waiting and _FINDER in sys.meta_path:
            sys.meta_path.remove(_FINDER)
    for callback in callbacks:
        _call(name, callback, module)


class _Loader:
    """The module's own loader, calling back once the module has executed. The module is
    given its own loader back before its code runs."""

    def __init__(self, loader: Any, name: str) -> None:
        self.loader = loader
        self.name = name

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        create = getattr(self.loader, "create_module", None)
        module: ModuleType | None = None if create is None else create(spec)
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        _imported(self.name, module)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.loader, attribute)


class _Finder:
    """At the front of ``sys.meta_path`` while modules are awaited: the spec the finders
    behind it give, with a loader that calls back after executing the module."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in _waiting:
            return None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec  # a namespace package or a legacy loader: left alone
        spec.loader = _Loader(spec.loader, fullname)
        return spec

    def invalidate_caches(self) -> None:
        return None


_FINDER = _Finder()

__all__ = ["when_imported"]
