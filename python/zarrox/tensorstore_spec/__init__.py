"""TensorStore-style JSON specs for zarrox: ``zarrox.open({"driver": "zarr3", "kvstore":
...})`` opens or creates an array exactly as TensorStore's ``zarr3`` and ``zarr`` drivers
do, writes the metadata TensorStore writes, and returns an :class:`ArrayView` (a view through
an index transform); ``Array.spec()`` gives the spec that reopens an array.

Modules: :mod:`spec` (parsing a spec and the open options), :mod:`kvstore` (kvstores onto
zarrox stores), :mod:`schema` (schema constraints; chunk layouts and the chunk shapes they
give are the core's ``_core.ChunkLayout``), :mod:`zarr3`/:mod:`zarr2`
(the drivers' metadata; partial zarr v3 codec chains are the core's ``_core.CodecChainSpec``),
:mod:`index_space` (domains, transforms, indexing), :mod:`of_array` (the spec of an array,
``Array.spec()``), :mod:`view` (reading and writing through a transform, resizing),
:mod:`driver` (open modes and context resources).
"""

from zarrox.nodes.node import is_spec
from zarrox.tensorstore_spec.driver import open_spec
from zarrox.tensorstore_spec.index_space import (
    DimExpression,
    IndexDomain,
    IndexTransform,
    d,
)
from zarrox.tensorstore_spec.of_array import array_spec
from zarrox.tensorstore_spec.spec import Spec
from zarrox.tensorstore_spec.units import Unit
from zarrox.tensorstore_spec.view import ArrayView

__all__ = [
    "ArrayView",
    "DimExpression",
    "IndexDomain",
    "IndexTransform",
    "Spec",
    "Unit",
    "array_spec",
    "d",
    "is_spec",
    "open_spec",
]
