"""``zarrox.asynchronous``: the awaitable API's older name; it lives in
:mod:`zarrox.api.asynchronous`, where zarr-python has it.

At run time ``import zarrox`` binds this name to :mod:`zarrox.api.asynchronous` itself (the
same module object); this file is what type checkers read, and it re-exports the same names.
"""

from zarrox.api.asynchronous import *  # noqa: F403
from zarrox.api.asynchronous import __all__ as __all__
