"""``zarrox.api.synchronous``: zarr-python's module name for the synchronous API, which is
:mod:`zarrox.api` itself.

At run time ``import zarrox`` binds this name to :mod:`zarrox.api` (the same module
object); this file is what type checkers read, and it re-exports the same names.
"""

from zarrox.api import *  # noqa: F403
from zarrox.api import __all__ as __all__
