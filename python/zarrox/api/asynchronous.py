"""``zarrox.api.asynchronous``: zarr-python's module name for the awaitable API, which
lives in :mod:`zarrox.asynchronous`.

At run time ``import zarrox`` binds this name to :mod:`zarrox.asynchronous` itself (the
same module object, as ``zarr.api.asynchronous`` is one module); this file is what type
checkers and the API reference read, and it re-exports the same names.
"""

from zarrox.asynchronous import *  # noqa: F403
from zarrox.asynchronous import __all__ as __all__
